@testable import Courier
import CourierHTTP2
import CourierTestSupport
import Foundation
import Synchronization
import Testing

@Suite("Native transport: an HTTP/2 server lowering SETTINGS_MAX_CONCURRENT_STREAMS")
struct HTTP2StreamLimitTests {
    @Test("a lower stream limit that arrives with a stream's end: the waiting request waits for room and succeeds (it was never refused)")
    func lowerLimitWithStreamEnd() async throws {
        let release = Mutex(false)
        let bothArrived = Mutex(false)
        let peer = try HTTP2ScriptedPeer { _, connection in
            try connection.start(settings: [HTTP2Setting(.maxConcurrentStreams, 2)])
            guard let first = try connection.nextRequest(), let second = try connection.nextRequest() else { return }
            bothArrived.withLock { $0 = true }
            // The test says when the third request waits in the pool for room.
            let clock = ContinuousClock()
            let deadline = clock.now + .seconds(10)
            while !release.withLock({ $0 }), clock.now < deadline { usleep(1_000) }
            // One write: the limit goes down to 1 and the first stream ends, freeing a slot
            // by the old limit but not by the new one (the second stream is still open).
            var bytes = HTTP2Frame.settings([HTTP2Setting(.maxConcurrentStreams, 1)]).serialized
            HTTP2Frame.headers(streamID: first.streamID, fieldBlock: connection.fieldBlock([(":status", "200")]),
                               endStream: true, endHeaders: true).serialize(into: &bytes)
            connection.sendRaw(bytes)
            connection.respond(second.streamID, body: Array(second.path.utf8))
            while let next = try connection.nextRequest() {
                connection.respond(next.streamID, body: Array(next.path.utf8))
            }
        }
        defer { peer.close() }
        let transport = NativeTransport(configuration: NativeTransport.Configuration().speakingH2C())
        defer { transport.shutdown() }
        func get(_ path: String) async throws -> HTTPResponse {
            try await transport.send(TransportRequest(method: .get, url: peer.url(path), timeout: .seconds(10)),
                                     observer: IgnoringTransportObserver())
        }
        async let first = get("/1")
        async let second = get("/2")
        #expect(await eventually(timeout: .seconds(10)) { bothArrived.withLock { $0 } })
        async let third = get("/3")
        let waiting = await eventuallyAsync(timeout: .seconds(10)) { await transport.poolSnapshot(for: peer.url("/"))?.waiting == 1 }
        #expect(waiting, "the third request never waited for a stream")
        release.withLock { $0 = true }
        let responses = try await [first, second, third]
        #expect(responses.map(\.status.code) == [200, 200, 200])
        // Whichever of the first two the server read first was answered with no body.
        let bodies = responses.map { String(decoding: $0.body, as: UTF8.self) }
        #expect(bodies == ["", "/2", "/3"] || bodies == ["/1", "", "/3"], "\(bodies)")
        #expect(peer.connectionsAccepted == 1)
    }
}
