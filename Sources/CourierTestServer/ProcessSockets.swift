#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// Counts this process's TCP sockets by port, for leak checks in tests: after a test released its
/// client, no socket should still be connected to the test's server, and a server should be
/// back to its listener alone.
///
/// Counting by port rather than counting every descriptor keeps the check exact while other
/// tests run in parallel: each test has its own server, on its own port. Each count is one
/// `getpeername`/`getsockname` call per open descriptor, cheap enough to poll.
///
/// ```swift
/// #expect(ProcessSockets.connected(toPort: server.port) == 0)   // the client closed its sockets
/// #expect(ProcessSockets.bound(toPort: server.port) == 1)       // only the listener is left
/// ```
public enum ProcessSockets {
    /// The sockets of this process whose remote end has `port`: the client sides of
    /// connections to a server on that port.
    /// - Parameter port: the server's port.
    /// - Returns: the count, or -1 when `/proc/self/fd` cannot be read.
    public static func connected(toPort port: Int) -> Int {
        count(port: port) { fd, address, length in getpeername(fd, address, length) == 0 }
    }

    /// The sockets of this process whose local end has `port`: a server's listener and the
    /// connections it accepted.
    /// - Parameter port: the server's port.
    /// - Returns: the count, or -1 when `/proc/self/fd` cannot be read.
    public static func bound(toPort port: Int) -> Int {
        count(port: port) { fd, address, length in getsockname(fd, address, length) == 0 }
    }

    /// The number of descriptors this process has open.
    public static var openDescriptorCount: Int {
        descriptors()?.count ?? -1
    }

    private static func count(port: Int,
                              _ name: (Int32, UnsafeMutablePointer<sockaddr>, UnsafeMutablePointer<socklen_t>) -> Bool) -> Int {
        guard let descriptors = descriptors() else { return -1 }
        var count = 0
        for fd in descriptors {
            var storage = sockaddr_storage()
            var length = socklen_t(MemoryLayout<sockaddr_storage>.size)
            let named = withUnsafeMutablePointer(to: &storage) {
                $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { name(fd, $0, &length) }
            }
            guard named else { continue }  // not a socket, or not connected
            let found: UInt16 = withUnsafePointer(to: &storage) { pointer in
                switch Int32(pointer.pointee.ss_family) {
                case AF_INET: pointer.withMemoryRebound(to: sockaddr_in.self, capacity: 1) { $0.pointee.sin_port }
                case AF_INET6: pointer.withMemoryRebound(to: sockaddr_in6.self, capacity: 1) { $0.pointee.sin6_port }
                default: 0
                }
            }
            if Int(UInt16(bigEndian: found)) == port { count += 1 }
        }
        return count
    }

    /// The descriptors open now, from /proc/self/fd (without the directory's own).
    private static func descriptors() -> [Int32]? {
        guard let directory = opendir("/proc/self/fd") else { return nil }
        defer { closedir(directory) }
        let own = dirfd(directory)
        // Read each name in place: a record can be shorter than `dirent`, so copying the whole
        // `d_name` array could read past the end of the directory buffer.
        let nameOffset = MemoryLayout<dirent>.offset(of: \dirent.d_name) ?? 19
        var descriptors: [Int32] = []
        while let entry = readdir(directory) {
            let name = String(cString: (UnsafeRawPointer(entry) + nameOffset).assumingMemoryBound(to: CChar.self))
            if let fd = Int32(name), fd != own { descriptors.append(fd) }
        }
        return descriptors
    }
}
