import Glibc

/// Ports on 127.0.0.1 for test peers that must be told their port.
package enum LoopbackPort {
    /// A port that was free a moment ago on 127.0.0.1 (bound to port 0, read back, released): a
    /// peer that loses it to another process in between must retry with another.
    package static func free() throws -> Int {
        let (descriptor, port) = try listening(backlog: 1)
        close(descriptor)
        return port
    }

    /// A TCP socket listening on 127.0.0.1, on a port the kernel picked, and that port; the
    /// caller closes the descriptor.
    package static func listening(backlog: Int32) throws -> (descriptor: Int32, port: Int) {
        let (fd, port) = try refusing()
        guard listen(fd, backlog) == 0 else {
            let failure = PeerError("listen() failed: errno \(errno)")
            close(fd)
            throw failure
        }
        return (fd, port)
    }

    /// A TCP socket bound to 127.0.0.1, on a port the kernel picked, but not listening, and that
    /// port: a connection to it is refused. While the caller keeps the descriptor open no other
    /// socket takes the port, and no connect picks it as its own local port (which, to a port
    /// nobody holds, can connect a loopback socket to itself).
    package static func refusing() throws -> (descriptor: Int32, port: Int) {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard fd >= 0 else { throw PeerError("socket() failed: errno \(errno)") }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        address.sin_port = 0
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        let bound = withUnsafeMutablePointer(to: &address) { pointer in
            pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) { raw in
                bind(fd, raw, length) == 0 && getsockname(fd, raw, &length) == 0
            }
        }
        guard bound else {
            let failure = PeerError("bind() failed: errno \(errno)")
            close(fd)
            throw failure
        }
        return (fd, Int(UInt16(bigEndian: address.sin_port)))
    }

    /// Whether something accepts TCP connections on 127.0.0.1:`port` now.
    package static func accepts(_ port: Int) -> Bool {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard fd >= 0 else { return false }
        defer { close(fd) }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        address.sin_port = UInt16(port).bigEndian
        return withUnsafePointer(to: &address) { pointer in
            pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) == 0
            }
        }
    }
}
