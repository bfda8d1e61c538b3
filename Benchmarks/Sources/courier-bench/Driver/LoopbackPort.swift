import Glibc

/// Loopback ports for the servers the driver starts.
enum LoopbackPort {
    /// A port on 127.0.0.1 that was free a moment ago (bound to port 0, then released).
    /// - Throws: ``BenchError`` when no socket can be bound.
    static func free() throws -> Int {
        let descriptor = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard descriptor >= 0 else { throw BenchError("socket() failed: errno \(errno)") }
        defer { close(descriptor) }
        var address = loopback(port: 0)
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        let bound = withUnsafeMutablePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                bind(descriptor, $0, length) == 0 && getsockname(descriptor, $0, &length) == 0
            }
        }
        guard bound else { throw BenchError("cannot bind 127.0.0.1:0: errno \(errno)") }
        return Int(UInt16(bigEndian: address.sin_port))
    }

    /// Whether something accepts connections on 127.0.0.1:`port`.
    static func isAccepting(_ port: Int) -> Bool {
        let descriptor = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard descriptor >= 0 else { return false }
        defer { close(descriptor) }
        var address = loopback(port: port)
        return withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                connect(descriptor, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) == 0
            }
        }
    }

    /// Waits up to `timeout` seconds for the port to accept connections.
    /// - Returns: whether it did.
    static func waitUntilAccepting(_ port: Int, timeout: Double) -> Bool {
        let deadline = Nanoseconds.now() &+ UInt64(timeout * 1e9)
        while Nanoseconds.now() < deadline {
            if isAccepting(port) { return true }
            usleep(20_000)
        }
        return false
    }

    private static func loopback(port: Int) -> sockaddr_in {
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = UInt16(truncatingIfNeeded: port).bigEndian
        address.sin_addr.s_addr = UInt32(0x7f00_0001).bigEndian
        return address
    }
}
