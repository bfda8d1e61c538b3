import CourierTLS
import CourierTestSupport
import Foundation
import Glibc

/// A blocking loopback TCP socket that pumps a `TLSClientSession`: the test
/// plays the part of Courier's transport, moving ciphertext between the
/// session and the socket.
final class TLSTestClient {
    let session: TLSClientSession
    private let fd: Int32

    /// Connects to 127.0.0.1:`port` and creates a session for `serverName`.
    ///
    /// Receives time out after 10 seconds so that a broken test cannot hang.
    init(port: Int, context: TLSContext, serverName: String) throws {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard fd >= 0 else { throw TestFailure("socket() failed: errno \(errno)") }
        var timeout = timeval(tv_sec: 10, tv_usec: 0)
        setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
        setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = UInt16(port).bigEndian
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        let connected = withUnsafePointer(to: &address) { pointer in
            pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) == 0
            }
        }
        guard connected else {
            let code = errno
            Glibc.close(fd)
            throw TestFailure("connect() to port \(port) failed: errno \(code)")
        }
        self.fd = fd
        do {
            self.session = try TLSClientSession(context: context, serverName: serverName, port: port)
        } catch {
            Glibc.close(fd)
            throw error
        }
    }

    deinit {
        Glibc.close(fd)
    }

    /// Runs the handshake to completion.
    ///
    /// - Throws: the session's `TLSError` (after sending its alert), or
    ///   ``TestFailure`` for socket errors and runaway handshakes.
    func handshake() throws {
        // Bounded: a TLS handshake needs a handful of round trips.
        for _ in 0..<50 {
            let state: TLSClientSession.HandshakeState
            do {
                state = try session.handshake()
            } catch {
                try? flush()
                throw error
            }
            try flush()
            if state == .complete { return }
            try receiveIntoSession()
        }
        throw TestFailure("the handshake did not finish after 50 round trips")
    }

    /// Encrypts and sends a request.
    func send(_ text: String) throws {
        try session.writePlaintext(Array(text.utf8))
        try flush()
    }

    /// How the response stream ended.
    enum End: Equatable {
        /// close_notify arrived.
        case closeNotify
        /// The TCP connection closed without close_notify.
        case unclean
    }

    /// Reads plaintext until the stream ends.
    ///
    /// - Parameter chunkSize: the most bytes to take from the session per read.
    /// - Returns: everything received and how the stream ended.
    func receiveAll(chunkSize: Int = 16_384) throws -> (bytes: [UInt8], end: End) {
        var received: [UInt8] = []
        // Bounded: 100,000 reads or socket receives are far more than the tests need.
        for _ in 0..<100_000 {
            let result: TLSClientSession.ReadResult
            do {
                result = try session.readPlaintext(into: &received, maximumCount: chunkSize)
            } catch {
                if error == .uncleanShutdown { return (received, .unclean) }
                throw error
            }
            try flush()
            switch result {
            case .bytes:
                continue
            case .closed:
                return (received, .closeNotify)
            case .wantsMoreInput:
                try receiveIntoSession()
            }
        }
        throw TestFailure("the response did not end")
    }

    /// Writes all pending ciphertext to the socket.
    func flush() throws {
        while let bytes = session.takeCiphertext() {
            try bytes.withUnsafeBytes { buffer in
                guard let base = buffer.baseAddress else { return }
                var offset = 0
                while offset < buffer.count {
                    let sent = Glibc.send(fd, base + offset, buffer.count - offset, Int32(MSG_NOSIGNAL))
                    guard sent > 0 else { throw TestFailure("send() failed: errno \(errno)") }
                    offset += sent
                }
            }
        }
    }

    /// Receives once from the socket and feeds the bytes (or end of file) to the session.
    func receiveIntoSession() throws {
        var buffer = [UInt8](repeating: 0, count: 16_384)
        let count = buffer.withUnsafeMutableBytes { recv(fd, $0.baseAddress, $0.count, 0) }
        if count < 0 {
            // A reset after the server rejected us counts as end of input.
            if errno == ECONNRESET {
                session.feedEndOfInput()
                return
            }
            throw TestFailure("recv() failed: errno \(errno)")
        }
        if count == 0 {
            session.feedEndOfInput()
        } else {
            buffer.withUnsafeBytes { session.feedCiphertext(UnsafeRawBufferPointer(rebasing: $0[0..<count])) }
        }
    }
}

/// Starts `openssl s_server` for `leaf`, runs `body`, and stops the server.
func withServer<T>(_ leaf: TestPKI.Leaf, arguments: [String] = ["-alpn", "http/1.1"],
                   _ body: (OpenSSLServerProcess) throws -> T) throws -> T {
    let server = try OpenSSLServerProcess.start(leaf: leaf, extraArguments: arguments)
    defer { server.stop() }
    return try body(server)
}

/// Connects to `server` with a fresh context for `configuration` and completes the handshake.
///
/// - Throws: the `TLSError` the handshake failed with.
@discardableResult
func connect(to server: OpenSSLServerProcess, configuration: TLSConfiguration,
             serverName: String = "localhost") throws -> TLSTestClient {
    let context = try TLSContext(configuration: configuration)
    let client = try TLSTestClient(port: server.port, context: context, serverName: serverName)
    try client.handshake()
    return client
}

extension OpenSSLServerProcess {
    /// `openssl s_server -www` for a test PKI leaf, started on this thread (the TLS tests block).
    /// - Parameters:
    ///   - leaf: the certificate and key to serve.
    ///   - extraArguments: more s_server options, e.g. `["-tls1_2"]`.
    ///   - port: the port to listen on (one try); by default a free one.
    static func start(leaf: TestPKI.Leaf, extraArguments: [String] = [], port: Int? = nil) throws -> OpenSSLServerProcess {
        try startNow(certificate: leaf.certificatePath, key: leaf.keyPath, arguments: extraArguments, port: port)
    }
}
