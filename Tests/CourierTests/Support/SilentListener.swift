import CourierTestSupport
import Foundation
import Synchronization
#if canImport(Glibc)
import Glibc
#endif

/// A server that accepts connections and never reads from them, so that a client sending a
/// large body fills the socket buffers and stays in the middle of its send (reliability case I2).
final class SilentListener: Sendable {
    let port: Int
    private let listener: Int32
    private let accepted = Locked<[Int32]>([])

    init() throws {
        let (listener, port) = try LoopbackPort.listening(backlog: 16)
        self.listener = listener
        self.port = port
        let thread = Thread { [listener, accepted] in
            while true {
                let client = accept(listener, nil, nil)
                guard client >= 0 else { return }  // the listener was shut down
                accepted.withLock { $0.append(client) }
            }
        }
        thread.start()
    }

    /// `http://127.0.0.1:<port>`.
    var url: URL { URL(string: "http://127.0.0.1:\(port)")! }

    /// Stops accepting and closes every accepted connection.
    func close() {
        Glibc.shutdown(listener, Int32(SHUT_RDWR))
        for fd in accepted.withLock({ descriptors in defer { descriptors = [] }; return descriptors }) { Glibc.close(fd) }
    }

    deinit {
        close()
        Glibc.close(listener)
    }
}
