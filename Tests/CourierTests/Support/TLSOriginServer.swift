import CourierTestSupport
import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// An in-process HTTPS origin for proxy tests: it listens on 127.0.0.1 (port 0), runs the
/// server side of TLS with a test certificate (``ServerTLSContext``) and answers every request
/// with `200` and ``ProxyChaosOrigin/body(for:)`` of its path, or as its ``Answer`` says,
/// keeping the connection open for more requests (HTTP/1.1 keep-alive), one thread per
/// connection; an empty answer closes the connection instead. It reads a body sent with `Content-Length` (not a chunked one), and logs every
/// request head it read, so that a test can check what reached the origin.
final class TLSOriginServer: Sendable {
    /// How the server answers one request: from its head (request line and fields, without the
    /// blank line) and its body, the bytes of a whole response, or none to close the connection
    /// without answering.
    typealias Answer = @Sendable (_ head: String, _ body: [UInt8]) -> [UInt8]

    /// The port it accepts on.
    let port: Int
    private let listener: Int32
    private let sockets = AcceptedSockets()
    private let heads = Locked<[String]>([])

    /// Starts listening; `tls` holds the certificate it serves, and `answer` answers each request
    /// (by default, `200` and ``ProxyChaosOrigin/body(for:)`` of the request's target).
    init(tls: ServerTLSContext, answer: @escaping Answer = TLSOriginServer.proxyChaosAnswer) throws {
        let (listener, port) = try LoopbackPort.listening(backlog: 64)
        self.listener = listener
        self.port = port
        let thread = Thread { [sockets, heads] in
            while true {
                let client = accept(listener, nil, nil)
                guard client >= 0 else { return }
                sockets.add(client)
                Thread {
                    let stream = PeerStream(fd: client)
                    defer {
                        stream.release()
                        sockets.close(client)
                    }
                    guard (try? stream.acceptTLS(tls)) != nil else { return }
                    Self.serve(stream, heads: heads, answer: answer)
                }.start()
            }
        }
        thread.start()
    }

    deinit {
        stop()
        Glibc.close(listener)
    }

    /// Answers the requests of one connection until the client closes it.
    private static func serve(_ stream: PeerStream, heads: Locked<[String]>, answer: Answer) {
        var pending: [UInt8] = []
        while let head = stream.readHead(&pending) {
            heads.withLock { $0.append(head) }
            let length = head.split(separator: "\r\n").dropFirst().lazy.compactMap { line -> Int? in
                let parts = line.split(separator: ":", maxSplits: 1)
                guard parts.count == 2, parts[0].lowercased() == "content-length" else { return nil }
                return Int(parts[1].trimmingCharacters(in: .whitespaces))
            }.first ?? 0
            guard stream.fill(&pending, toCount: length) else { return }
            let body = Array(pending.prefix(length))
            pending.removeFirst(length)
            let reply = answer(head, body)
            guard !reply.isEmpty, stream.write(reply) else { return }
        }
    }

    /// The default answer: `200` and ``ProxyChaosOrigin/body(for:)`` of the request's target.
    static func proxyChaosAnswer(head: String, body: [UInt8]) -> [UInt8] {
        let target = head.split(separator: " ", maxSplits: 2).dropFirst().first.map(String.init) ?? "/"
        let content = ProxyChaosOrigin.body(for: target)
        return Array("HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\nContent-Length: \(content.count)\r\n\r\n".utf8) + Array(content)
    }

    /// The request heads it read so far, in order.
    var requestHeads: [String] { heads.withLock { $0 } }

    /// Stops accepting and shuts down every connection.
    func stop() {
        Glibc.shutdown(listener, Int32(SHUT_RDWR))
        sockets.shutDownAll()
    }
}

/// What the origins of the proxy chaos test answer (``TLSOriginServer``, and a `TestServer`
/// route), so that a test can tell the origin's own answer from anything else.
enum ProxyChaosOrigin {
    /// The body for `path`: the path on a line, then 24–40 KB of text that depends on it (long
    /// enough for a proxy to cut it in the middle, past a TLS handshake's bytes).
    static func body(for path: String) -> Data {
        let seed = path.utf8.reduce(0) { $0 &* 31 &+ Int($1) } & 0xFFFF
        let line = "\(path) \(seed)\n"
        let length = 24_000 + seed % 16_000
        var text = ""
        text.reserveCapacity(length + line.count)
        while text.utf8.count < length { text += line }
        return Data(text.utf8)
    }

    /// The body a test uploads to `path` (POST, PUT): 6–22 KB of bytes that depend on it, unlike
    /// any answer's, so that the origin can tell a body that arrived intact.
    static func upload(for path: String) -> Data {
        let seed = path.utf8.reduce(7) { $0 &* 33 &+ Int($1) } & 0xFFFF
        return Data((0..<(6_000 + seed % 16_000)).map { UInt8(truncatingIfNeeded: $0 &* 13 &+ seed &+ $0 >> 8) })
    }
}
