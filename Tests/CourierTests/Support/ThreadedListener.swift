import CourierTestSupport
import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// A loopback listener (127.0.0.1, port 0) for raw test peers: it accepts on a thread of its own
/// and serves each connection on a new thread with `serve(descriptor, number)` (numbers start at
/// 1), then closes the connection. ``close()`` stops accepting and shuts every open connection
/// down, so that the peer's threads end with their test.
final class ThreadedListener: Sendable {
    /// The port the kernel picked.
    let port: Int
    private let listener: Int32
    private let accepted = Locked<[Int32]>([])
    private let connections = Locked(0)

    /// Starts listening; `receiveBuffer` sets `SO_RCVBUF` on the listener (and so on every
    /// accepted socket), for a peer that must hold a client back soon when it stops reading.
    init(receiveBuffer: Int32? = nil, serve: @escaping @Sendable (_ descriptor: Int32, _ number: Int) -> Void) throws {
        (listener, port) = try LoopbackPort.listening(backlog: 64)
        if var size = receiveBuffer {
            setsockopt(listener, SOL_SOCKET, SO_RCVBUF, &size, socklen_t(MemoryLayout<Int32>.size))
        }
        Thread { [listener, accepted, connections] in
            while true {
                let client = accept(listener, nil, nil)
                guard client >= 0 else { return }
                accepted.withLock { $0.append(client) }
                let number = connections.withLock { $0 += 1; return $0 }
                Thread {
                    serve(client, number)
                    // Closing with request bytes unread resets the connection, and a reset drops
                    // whatever is still queued to send: let what the peer sent arrive first.
                    Self.awaitDelivery(client)
                    accepted.withLock { descriptors in
                        descriptors.removeAll { $0 == client }
                        Glibc.close(client)
                    }
                }.start()
            }
        }.start()
    }

    deinit {
        close()
        Glibc.close(listener)
    }

    /// How many connections it accepted.
    var connectionsAccepted: Int { connections.withLock { $0 } }

    /// Writes all of `data` to the socket `fd` (`MSG_NOSIGNAL`: a client that went away raises
    /// no `SIGPIPE`); stops at the first failed write.
    static func send(_ fd: Int32, _ data: Data) {
        data.withUnsafeBytes { bytes in
            var offset = 0
            while offset < bytes.count {
                let written = Glibc.send(fd, bytes.baseAddress! + offset, bytes.count - offset, Int32(MSG_NOSIGNAL))
                guard written > 0 else { return }
                offset += written
            }
        }
    }

    /// Waits until the client's kernel acknowledged every octet sent on `fd` (at most 2 s), so
    /// that a close that resets the connection (client bytes lie unread) cannot discard an
    /// answer still queued to send: on a loaded machine the kernel may hold a small write back
    /// for a moment.
    static func awaitDelivery(_ fd: Int32) {
        let deadline = Date().addingTimeInterval(2)
        var queued: Int32 = 0
        // TIOCOUTQ (SIOCOUTQ): the octets sent but not yet acknowledged.
        while ioctl(fd, UInt(TIOCOUTQ), &queued) == 0, queued > 0, Date() < deadline { usleep(1_000) }
    }

    /// Stops accepting and shuts every connection down.
    func close() {
        Glibc.shutdown(listener, Int32(SHUT_RDWR))
        accepted.withLock { descriptors in
            for fd in descriptors { Glibc.shutdown(fd, Int32(SHUT_RDWR)) }
        }
    }
}
