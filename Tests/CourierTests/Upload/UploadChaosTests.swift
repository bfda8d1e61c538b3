import Courier
import CourierTestServer
import Foundation
import Testing

/// Request bodies in seeded random conversations over real sockets (``UploadChaos``): ten
/// uploads at once from memory, files and streams of chunks (with their length or without),
/// POST and PUT, some with `Expect: 100-continue`, against a server that stores them and answers
/// their digest, reads slowly, answers early (413, 401, 200), cuts, drops, stalls, and on HTTP/2
/// refuses streams and sends GOAWAY below them, while the client cancels some. Each request must
/// end once, as the server's treatment of it says; a success carries the digest of exactly the
/// body sent (a server acknowledges only what it stored) or the server's own early answer; a
/// stream is never sent twice, never read after its request ended, and never read far ahead of
/// what the server took; nothing leaks.
@Suite("Uploads in random conversations over real sockets")
struct UploadChaosTests {
    /// What the client may hold of a stream beyond what the kernel took (HTTP/1.1) or the
    /// stream's window allowed (HTTP/2), besides one chunk of the caller's: the stream's buffer,
    /// the chunk being written, and on HTTP/2 the body waiting in the machine for window
    /// (``HTTP2ClientConnection/bufferedBodyLimit``, which one more chunk may pass). On HTTP/1.1
    /// the server's own read buffer (64 KiB) does not count as received.
    static func aheadBound(http2: Bool) -> Int {
        (http2 ? 65_535 + 4 * (256 << 10) : 2 * (256 << 10) + (64 << 10)) + (16 << 10)
    }

    @Test("HTTP/1.1, 6 random conversations of 10 uploads on 3 pooled connections: each ends once as the server's treatment says; a success carries the digest of the body sent; a stream is sent once, never read after its end, nor far ahead of the socket; nothing leaks")
    func http1() async throws {
        let seed = SeededRandom.seed(default: 0x5EED_0005_0201)
        for conversation in 0..<6 {
            try await playHTTP1(seed: seed, conversation: conversation, urlSession: false)
        }
    }

    @Test("HTTP/2, 6 random conversations of 10 uploads: each ends once as the peer's treatment says; an early answer stands, RST_STREAM(NO_ERROR) after it or not; a refused file or data body goes again, a refused stream ends with bodyNotReplayable; a stream is read within its window; nothing leaks")
    func http2() async throws {
        let seed = SeededRandom.seed(default: 0x5EED_0005_0202)
        for conversation in 0..<6 {
            try await playHTTP2(seed: seed, conversation: conversation)
        }
    }

    @Test("URLSessionTransport, 4 random conversations of 10 uploads over HTTP/1.1: a success carries the digest of the body sent, a stream ends with unsupportedByTransport unread, each ends once, nothing leaks")
    func urlSession() async throws {
        let seed = SeededRandom.seed(default: 0x5EED_0005_0203)
        for conversation in 0..<4 {
            try await playHTTP1(seed: seed, conversation: conversation, urlSession: true)
        }
    }

    private func playHTTP1(seed: UInt64, conversation: Int, urlSession: Bool) async throws {
        var random = SeededRandom(seed: seed, stream: conversation)
        let uploads = (0..<10).map { UploadChaos.plan(&random, conversation: conversation, index: $0, http2: false, urlSession: urlSession) }
        let context = "\(urlSession ? "URLSession" : "HTTP/1.1") conversation \(conversation), \(SeededRandom(seed: seed).replayHint)"
        let peer = try UploadChaosHTTP1Peer(uploads)
        defer { peer.close() }
        var configuration = NativeTransport.Configuration(maxConnectionsPerHost: 3)
        configuration.proxy = .none
        let results = try await UploadChaosRun.run(uploads, on: peer, native: urlSession ? nil : configuration)
        for (upload, result) in zip(uploads, results) {
            let visits = peer.visits(upload.path)
            let history = "\(upload): the server saw \(visits), the client \(result), the source was read \(upload.log.iterations) times, \(upload.log.yielded) octets, \(upload.log.readsAfterEnd) reads after the end; \(context)"
            Self.checkSource(upload, visits: visits.count, stored: visits.count { $0.complete }, ahead: visits.first?.ahead, http2: false, history)
            if case .failure(.cancelled) = result, upload.cancelAfter != nil { continue }
            if urlSession {
                Self.checkLoosely(upload, result, visits, history)
            } else {
                Self.check(upload, result, visits, history)
            }
        }
    }

    private func playHTTP2(seed: UInt64, conversation: Int) async throws {
        var random = SeededRandom(seed: seed, stream: conversation)
        let uploads = (0..<10).map { UploadChaos.plan(&random, conversation: conversation, index: $0, http2: true) }
        let context = "HTTP/2 conversation \(conversation), \(SeededRandom(seed: seed).replayHint)"
        let server = UploadChaosHTTP2Peer(uploads, seed: random.next())
        let peer = try HTTP2ScriptedPeer(script: server.script)
        defer { peer.close() }
        let results = try await UploadChaosRun.run(uploads, on: peer, native: NativeTransport.Configuration().speakingH2C())
        let dropped = uploads.contains { server.visits($0.path).contains { $0.treatment == .lost } }
        for (upload, result) in zip(uploads, results) {
            let visits = server.visits(upload.path)
            let history = "\(upload): the peer saw \(visits), the client \(result), the source was read \(upload.log.iterations) times, \(upload.log.yielded) octets, \(upload.log.readsAfterEnd) reads after the end; \(context)"
            let stored = visits.count { if case .answered(let text) = $0.treatment { text == upload.answer } else { false } }
            Self.checkSource(upload, visits: visits.count, stored: stored, ahead: visits.first?.ahead, http2: true, history)
            if case .failure(.cancelled) = result, upload.cancelAfter != nil { continue }
            Self.check(upload, result, visits, dropped: dropped, history)
        }
        #expect(peer.connectionsAccepted <= 12, "\(peer.connectionsAccepted) connections; \(context)")
    }
}
