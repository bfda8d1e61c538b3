import Foundation

/// This process's TCP sockets aimed at a port in any state, including connects still in
/// progress (`SYN_SENT`), which `getpeername` (and so `ProcessSockets`) cannot see: read from
/// the kernel's tables (`/proc/self/net/tcp`, `tcp6`) and matched to `/proc/self/fd` by inode.
enum TCPSocketTable {
    /// The sockets of this process whose remote port is `port`, connected or still connecting.
    /// - Returns: the count, or -1 when the tables cannot be read.
    static func aimedAt(port: Int) -> Int {
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

    /// Waits, polling every 20 ms on a thread of its own (the tables are long on a busy machine,
    /// and reading them must not hold one of the few Swift concurrency threads), until exactly
    /// `count` sockets are aimed at each port of `ports`, or `timeout` passes.
    /// - Returns: whether the counts were reached.
    static func reach(_ count: [Int: Int], timeout: Duration = .seconds(10)) async -> Bool {
        let reached = try? await blocking {
            let clock = ContinuousClock()
            let deadline = clock.now + timeout
            while true {
                if count.allSatisfy({ aimedAt(port: $0.key) == $0.value }) { return true }
                if clock.now >= deadline { return false }
                Thread.sleep(forTimeInterval: 0.02)
            }
        }
        return reached ?? false
    }

    /// The inodes of the table rows whose remote address has `port` (hexadecimal after the colon).
    private static func inodes(remotePort port: Int) -> Set<String>? {
        var found: Set<String> = []
        var readAny = false
        for table in ["/proc/self/net/tcp", "/proc/self/net/tcp6"] {
            // Read to the end: procfs files report a size of 0, which whole-file readers may trust.
            guard let data = FileHandle(forReadingAtPath: table)?.readDataToEndOfFile() else { continue }
            let text = String(decoding: data, as: UTF8.self)
            readAny = true
            let needle = ":" + String(format: "%04X", port) + " "
            for line in text.split(separator: "\n").dropFirst() where line.contains(needle) {
                let columns = line.split(separator: " ", omittingEmptySubsequences: true)
                guard columns.count > 9, let colon = columns[2].lastIndex(of: ":"),
                      Int(columns[2][columns[2].index(after: colon)...], radix: 16) == port else { continue }
                found.insert(String(columns[9]))
            }
        }
        return readAny ? found : nil
    }
}
