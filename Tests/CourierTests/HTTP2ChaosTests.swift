import Courier
import CourierTestServer
import Foundation
import Testing

/// The HTTP/2 connection driver, the pool and the state machine together, over real sockets,
/// against a server that treats each request at random (``HTTP2ChaosServer``): answers, refusals,
/// resets, GOAWAY, dropped connections and cut responses, while the client cancels some requests.
@Suite("HTTP/2 against a server that misbehaves at random")
struct HTTP2ChaosTests {
    @Test("30 random conversations of 12 GETs and POSTs: each ends once, with its own answer or an error the server caused; a refused request is sent again; nothing leaks")
    func randomServers() async throws {
        let seed = SeededRandom.seed(default: 0x5EED_0005_0002)
        for conversation in 0..<30 {
            try await play(seed: seed, conversation: conversation)
        }
    }

    private func play(seed: UInt64, conversation: Int) async throws {
        var random = SeededRandom(seed: seed, stream: conversation)
        let server = HTTP2ChaosServer(seed: random.next())
        let pause = Int(random.next() % 5)
        let paths = (0..<12).map { "/c\(conversation)/r\($0)" }
        // A quarter are POSTs, their bodies up to 100,000 octets: past the server's windows.
        let bodies = paths.map { _ in
            random.next() % 4 == 0 ? (0..<Int(random.next() % 100_000)).map { UInt8(truncatingIfNeeded: $0 &* 7) } : nil
        }
        let requests = zip(paths, bodies).map { path, body in
            body.map { HTTPRequest(.post, path, body: .data(Data($0))) } ?? HTTPRequest(.get, path)
        }
        let cancelled = Set(paths.filter { _ in random.next() % 8 == 0 })
        let context = "conversation \(conversation), \(SeededRandom(seed: seed).replayHint)"
        let (outcomes, peer) = try await runHTTP2Case(requests, during: { connection, ids in
            try await Task.sleep(for: .milliseconds(pause))
            for (path, id) in zip(paths, ids) where cancelled.contains(path) { connection.cancel(id) }
        }, script: server.script)
        let dropped = paths.contains { server.treatments(of: $0).contains(.lost) }
        for ((path, body), outcome) in zip(zip(paths, bodies), outcomes) {
            let treatments = server.treatments(of: path)
            let history = "\(path): the server did \(treatments), the client saw \(outcome.result); \(context)"
            switch outcome.result {
            case .success(let response):
                #expect(response.text == HTTP2ChaosServer.answer(path: path, body: body ?? []) && treatments.contains(.answered),
                        "\(history)")
            case .failure(let error) where error == .cancelled:
                #expect(cancelled.contains(path), "\(history)")
            case .failure(let error):
                // A refusal is retried; only a reset, or a connection the server dropped, may fail a
                // request (one the server never read when it dropped its connection included). A
                // POST on a dropped connection is not sent again: the server may have acted on it.
                let refusals = treatments.count { $0 == .refused }
                let explained = treatments.contains { $0.mayFail }
                    || (error == .connectionLost && dropped && !treatments.contains(.answered))
                #expect(explained, "\(history)")
                #expect(refusals > 3 || !(error.detail ?? "").contains("unprocessed"), "\(history)")
            }
        }
        #expect(peer.connectionsAccepted <= 8, "\(peer.connectionsAccepted) connections; \(context)")
    }
}
