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
        var readAny = false
        for table in ["/proc/self/net/tcp", "/proc/self/net/tcp6"] {
            // Read to the end: procfs files report a size of 0, which whole-file readers may trust.
            guard let data = FileHandle(forReadingAtPath: table)?.readDataToEndOfFile() else { continue }
            readAny = true
            let bytes = [UInt8](data)
            var lineStart = bytes.firstIndex(of: UInt8(ascii: "\n")).map { $0 + 1 } ?? bytes.count  // skip the header
            while lineStart < bytes.count {
                let lineEnd = bytes[lineStart...].firstIndex(of: UInt8(ascii: "\n")) ?? bytes.count
                let columns = bytes[lineStart..<lineEnd].split(separator: UInt8(ascii: " "), maxSplits: 10)
                if columns.count > 9, let colon = columns[2].lastIndex(of: UInt8(ascii: ":")),
                   Int(String(decoding: columns[2][(colon + 1)...], as: UTF8.self), radix: 16) == port {
                    found.insert(String(decoding: columns[9], as: UTF8.self))
                }
                lineStart = lineEnd + 1
            }
        }
        return readAny ? found : nil
    }
}
