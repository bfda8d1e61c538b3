import CourierTestServer
import Foundation

/// The ``TestServer`` side of ``StreamingChaos`` downloads over HTTP/1.1: a route that sends each
/// body in 16 KiB pieces, waiting after each until the socket has taken it (``TestServer/Step/whenSent(_:)``),
/// so that its log says how far the body got while the client was not reading; then the body's
/// fault: a close, a reset or a stall.
final class StreamingChaosRoute: Sendable {
    /// How far a body got.
    struct Log: Sendable {
        /// Body octets the socket took.
        var sent = 0
        /// Every octet the server will send is in the socket.
        var finished = false
    }

    private let logs = Locked<[String: Log]>([:])

    /// Serves `downloads` on `server`.
    init(_ downloads: [StreamingChaos.Download], on server: TestServer) {
        for download in downloads {
            server.route(download.path) { [logs] _ in .script(Self.steps(download, logs)) }
        }
    }

    /// How far `path`'s body got.
    func log(_ path: String) -> Log { logs.withLock { $0[path] ?? Log() } }

    private static func steps(_ download: StreamingChaos.Download, _ logs: Locked<[String: Log]>) -> [TestServer.Step] {
        let path = download.path
        let framing = download.chunked ? "Transfer-Encoding: chunked" : "Content-Length: \(download.size)"
        var steps: [TestServer.Step] = [.send("HTTP/1.1 200 OK\r\n\(framing)\r\n\r\n")]
        let available = download.fault.available(download.size)
        for start in stride(from: 0, to: available, by: 16_384) {
            let end = min(start + 16_384, available)
            let piece = Data(StreamingChaos.bytes(download.index, start..<end))
            steps.append(.send(download.chunked ? Data("\(String(piece.count, radix: 16))\r\n".utf8) + piece + Data("\r\n".utf8) : piece))
            steps.append(.whenSent { logs.withLock { $0[path, default: Log()].sent = end } })
        }
        if download.chunked, download.fault == .none { steps.append(.send("0\r\n\r\n")) }
        steps.append(.whenSent { logs.withLock { $0[path, default: Log()].finished = true } })
        switch download.fault {
        case .none: break
        case .cut: steps.append(.close)
        case .drop: steps.append(.reset)
        case .stall: steps.append(.stall)
        }
        return steps
    }
}
