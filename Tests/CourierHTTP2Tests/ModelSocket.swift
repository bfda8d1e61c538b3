#if canImport(Glibc)
import Glibc
#endif

/// The blocking reads and writes of one accepted test connection (used by one thread).
struct ModelSocket {
    let fd: Int32
    private var buffer = [UInt8](repeating: 0, count: 65_536)

    /// A socket for the accepted descriptor `fd` (the caller closes it).
    init(fd: Int32) {
        self.fd = fd
    }

    /// What arrives within `waitingMilliseconds` (empty when nothing did), or `nil` once the
    /// client closed or the connection failed.
    mutating func read(waitingMilliseconds: Int32) -> [UInt8]? {
        var poller = pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
        let ready = poll(&poller, 1, waitingMilliseconds)
        guard ready > 0 else { return ready == 0 ? [] : nil }
        let count = buffer.withUnsafeMutableBytes { Glibc.read(fd, $0.baseAddress, $0.count) }
        guard count > 0 else { return nil }
        return Array(buffer[..<count])
    }

    /// Writes all of `bytes`, blocking while the client's receive buffer is full (the client
    /// always reads); stops quietly when the connection fails.
    func write(_ bytes: [UInt8]) {
        var offset = 0
        while offset < bytes.count {
            let written = bytes[offset...].withUnsafeBytes { send(fd, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
            guard written > 0 else { return }
            offset += written
        }
    }
}
