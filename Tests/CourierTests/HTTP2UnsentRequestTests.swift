@testable import Courier
import CourierHTTP2
import CourierTestSupport
import Foundation
import Testing

/// A request that the pool places on an HTTP/2 connection as a stream ends, just before the
/// connection turns out lost, never had a byte written: it goes out on another connection,
/// whatever its method, instead of failing with ``HTTPConnectionError/connectionLost``.
@Suite("HTTP/2: a request placed on a connection that is lost before writing it", .timeLimit(.minutes(2)))
struct HTTP2UnsentRequestTests {
    @Test("one stream at a time: a 16 MiB upload gets an early answer and the connection resets; the POST that waited for the stream and was placed on it as the answer ended goes out on a new connection (3 rounds: the reset races the answer)",
          arguments: 0..<3)
    func placedOnLostConnection(round: Int) async throws {
        let largeSeen = Locked(false), queued = Locked(false)
        let peer = try HTTP2ScriptedPeer { index, connection in
            guard index == 0 else {
                try connection.start()
                try connection.serve()
                return
            }
            try connection.start(settings: [HTTP2Setting(.maxConcurrentStreams, 1), HTTP2Setting(.initialWindowSize, 1 << 30)])
            connection.send(.windowUpdate(streamID: 0, increment: 1 << 30))
            var large: UInt32?
            var received = 0
            let deadline = Date().addingTimeInterval(20)
            while Date() < deadline {
                guard case .frame(let frame) = try connection.nextFrame(waitingAtMost: 100) else { continue }
                switch frame {
                case .headers(let id, let block, _, _, _, _):
                    if connection.decodeFields(block).contains(where: { $0.name == ":path" && $0.value == "/large" }) {
                        large = id
                        largeSeen.withLock { $0 = true }
                    }
                case .data(let id, let data, _, _) where id == large:
                    received += data.count
                default:
                    break
                }
                guard let large, received >= 1 << 20 else { continue }
                // The rest of the body stays unread (the client is blocked writing it) until the
                // other request waits in the pool; then the answer and at once the reset.
                while !queued.withLock({ $0 }), Date() < deadline { usleep(1_000) }
                connection.respond(large, body: Array("early".utf8))
                connection.close()
                return
            }
        }
        defer { peer.close() }
        await withLeakCheck { leaks in
            let transport = leaks.native(NativeTransport.Configuration().speakingH2C())
            defer { transport.shutdown() }
            let connection = leaks.track(HTTPConnection(baseURL: peer.baseURL, configuration: .init(
                timeout: .seconds(20), retryPolicy: .never, validation: .statusCodes(100..<600), transport: transport, cache: nil)))
            let upload = Task { () -> Result<HTTPResponse, HTTPConnectionError> in
                await Self.outcome(of: HTTPRequest(.post, "/large", body: .data(Data(repeating: 0x61, count: 16 << 20))), on: connection)
            }
            #expect(await eventually { largeSeen.withLock { $0 } })
            let waiting = Task { () -> Result<HTTPResponse, HTTPConnectionError> in
                await Self.outcome(of: HTTPRequest(.post, "/after", body: .data(Data("later".utf8))), on: connection)
            }
            #expect(await eventuallyAsync { await transport.poolSnapshot(for: peer.baseURL)?.waiting == 1 })
            queued.withLock { $0 = true }
            let early = await upload.value, after = await waiting.value
            #expect((try? early.get())?.text == "early", "\(early)")
            #expect((try? after.get())?.text == "/after", "\(after)")
            #expect(peer.connectionsAccepted == 2)
        }
    }

    /// What sending `request` on `connection` ends in.
    static func outcome(of request: HTTPRequest, on connection: HTTPConnection) async -> Result<HTTPResponse, HTTPConnectionError> {
        do throws(HTTPConnectionError) {
            return .success(try await connection.send(request))
        } catch {
            return .failure(error)
        }
    }
}
