import CourierTestSupport
import Foundation

/// This process's TCP sockets aimed at a port in any state, including connects still in
/// progress (`SYN_SENT`), which `getpeername` (and so `ProcessSockets`) cannot see: read from
/// the kernel's tables (`/proc/self/net/tcp`, `tcp6`) and matched to `/proc/self/fd` by inode.
///
/// The tables list every socket of the machine's network namespace (tens of thousands while
/// the suite runs), so they are read on a thread of their own, never on one of the few Swift
/// concurrency threads, and scanned as bytes.
enum TCPSocketTable {
    /// The sockets of this process whose remote port is `port`, connected or still connecting;
    /// -1 when the tables cannot be read.
    static func count(port: Int) async -> Int {
        (try? await blocking { aimedAt(port: port) }) ?? -1
    }

    /// Waits, polling every 50 ms on a thread of its own, until exactly `counts[port]` sockets
    /// are aimed at each port, or `timeout` passes.
    /// - Returns: whether the counts were reached.
    static func reach(_ counts: [Int: Int], timeout: Duration = .seconds(10)) async -> Bool {
        let reached = try? await blocking {
            let clock = ContinuousClock()
            let deadline = clock.now + timeout
            while true {
                if counts.allSatisfy({ aimedAt(port: $0.key) == $0.value }) { return true }
                if clock.now >= deadline { return false }
                Thread.sleep(forTimeInterval: 0.05)
            }
        }
        return reached ?? false
    }

    /// The bytes the kernel holds in the connected sockets of `port`, at either end (its
    /// `tx_queue`, written and not yet acknowledged, plus its `rx_queue`, received and not yet
    /// read); `nil` when the tables cannot be read. What one end wrote and the other has not
    /// read is all in there, however far the kernel grew the buffers.
    static func queuedBytes(port: Int) async -> Int? {
        try? await blocking { queued(port: port) }
    }

    private static func queued(port: Int) -> Int? {
        var total = 0
        let read = forEachRow { columns in
            // local address, remote address, state (0A: listening; a connection one end has
            // closed still holds what the other has not read), tx_queue:rx_queue
            guard columns.count > 4, !columns[3].elementsEqual("0A".utf8),
                  Self.port(of: columns[1]) == port || Self.port(of: columns[2]) == port else { return }
            for queue in columns[4].split(separator: UInt8(ascii: ":")) {
                total += Int(String(decoding: queue, as: UTF8.self), radix: 16) ?? 0
            }
        }
        return read ? total : nil
    }

    /// The port of an `ADDRESS:PORT` column (hexadecimal).
    private static func port(of address: ArraySlice<UInt8>) -> Int? {
        address.lastIndex(of: UInt8(ascii: ":")).flatMap { Int(String(decoding: address[($0 + 1)...], as: UTF8.self), radix: 16) }
    }

    /// Calls `body` with the columns of every row of the TCP tables (IPv4 and IPv6), headers
    /// skipped; the columns are split on spaces, the eleventh holding the rest of the row.
    /// - Returns: whether any table could be read.
    private static func forEachRow(_ body: ([ArraySlice<UInt8>]) -> Void) -> Bool {
        var readAny = false
        for table in ["/proc/self/net/tcp", "/proc/self/net/tcp6"] {
            guard let bytes = wholeFile(table) else { continue }
            readAny = true
            var lineStart = bytes.firstIndex(of: UInt8(ascii: "\n")).map { $0 + 1 } ?? bytes.count  // skip the header
            while lineStart < bytes.count {
                let lineEnd = bytes[lineStart...].firstIndex(of: UInt8(ascii: "\n")) ?? bytes.count
                body(bytes[lineStart..<lineEnd].split(separator: UInt8(ascii: " "), maxSplits: 10))
                lineStart = lineEnd + 1
            }
        }
        return readAny
    }

    /// The whole of a `/proc` file, read with `read` until it returns 0: procfs files report a
    /// size of 0, and a reader that trusts it, or stops at a short read, misses rows (the tables
    /// hold tens of thousands of sockets while the suite runs). `nil` when it cannot be opened.
    static func wholeFile(_ path: String) -> [UInt8]? {
        let fd = open(path, O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else { return nil }
        defer { close(fd) }
        var bytes: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 65_536)
        while true {
            let count = chunk.withUnsafeMutableBytes { read(fd, $0.baseAddress, $0.count) }
            guard count > 0 else { break }
            bytes += chunk[0..<count]
        }
        return bytes
    }

    private static func aimedAt(port: Int) -> Int {
        guard let inodes = inodes(remotePort: port),
              let entries = try? FileManager.default.contentsOfDirectory(atPath: "/proc/self/fd") else { return -1 }
        var count = 0
        for entry in entries {
            guard let target = try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/fd/\(entry)"),
                  target.hasPrefix("socket:["), target.hasSuffix("]") else { continue }
            if inodes.contains(String(target.dropFirst(8).dropLast())) { count += 1 }
        }
        return count
    }

    /// The inodes of the table rows whose remote address (third column, `ADDRESS:PORT` in
    /// hexadecimal) has `port`; the inode is the tenth column.
    private static func inodes(remotePort port: Int) -> Set<String>? {
        var found: Set<String> = []
        let read = forEachRow { columns in
            if columns.count > 9, Self.port(of: columns[2]) == port {
                found.insert(String(decoding: columns[9], as: UTF8.self))
            }
        }
        return read ? found : nil
    }
}
