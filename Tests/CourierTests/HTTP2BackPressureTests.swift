@testable import Courier
import CourierHTTP2
import CourierTestSupport
import Foundation
import Testing

/// HTTP/2 back-pressure of streamed bodies at the driver, over a real socket to a scripted peer
/// that takes turns with the reader (``Lockstep``) and fences with PING
/// (``HTTP2PeerConnection/fence()``): the events that matter happen in a forced order, so each
/// test fails on every run when the behaviour it pins down breaks. The reader's window must stay
/// closed while it holds a full buffer, whatever order its reads and demands reach the loop in.
@Suite("HTTP/2 back-pressure in lockstep with a scripted peer")
struct HTTP2BackPressureTests {
    /// One DATA frame's payload, as the peer sends it (the client's SETTINGS_MAX_FRAME_SIZE).
    static let frame = 16 << 10
    /// The client's stream window (SETTINGS_INITIAL_WINDOW_SIZE).
    static let streamWindow = 1 << 20
    /// What a streamed body's buffer holds before the transport pauses its stream.
    static let buffered = 256 << 10

    /// `count` octets of a pattern that does not repeat on frame boundaries.
    static func body(_ count: Int) -> [UInt8] {
        (0..<count).map { UInt8(truncatingIfNeeded: $0 &* 31 &+ $0 >> 13) }
    }

    /// What a peer script saw of the stream's window.
    struct WindowLog: Sendable {
        /// Stream WINDOW_UPDATE increments that came while the reader held a full buffer.
        var whilePaused: [Int] = []
        /// The increment that came once the reader had taken the buffer down to half.
        var onResume: Int?
    }

    @Test("one read whose DATA reaches half the stream window and fills the reader's buffer gives none of the window back while the reader is paused; the reader taking half its buffer gives it all back, and the body arrives whole")
    func readThatPausesKeepsItsWindow() async throws {
        let total = Self.streamWindow
        let body = Self.body(total)
        let steps = Lockstep()
        let log = Locked(WindowLog())
        let peer = try HTTP2ScriptedPeer { _, connection in
            try connection.start()
            guard let request = try connection.nextRequest() else { throw PeerError("no request") }
            let id = request.streamID
            connection.respond(id, headers: [("content-length", "\(total)")], end: false)
            // 256 KiB in two halves, each taken before the next: the stream never pauses.
            connection.sendData(id, body, 0..<(128 << 10))
            _ = try connection.fence()
            steps.peerFinished(1)
            guard steps.peerWaits(for: 1) else { return }
            connection.sendData(id, body, (128 << 10)..<(256 << 10))
            _ = try connection.fence()
            steps.peerFinished(2)
            guard steps.peerWaits(for: 2) else { return }
            // 240 KiB the reader holds: 496 KiB received since the stream's window was last given
            // back (never); then one DATA frame, parsed and delivered by one receive: it brings
            // that to half the window (512 KiB) and the reader's buffer to 256 KiB, so the reader
            // pauses while the frame is delivered.
            connection.sendData(id, body, (256 << 10)..<(496 << 10))
            var frames = try connection.fence()
            connection.sendData(id, body, (496 << 10)..<(512 << 10))
            frames += try connection.fence()
            frames += try connection.fence()
            log.withLock { $0.whilePaused = frames.streamWindowUpdates(id) }
            steps.peerFinished(3)
            guard steps.peerWaits(for: 3) else { return }
            // The reader took 128 KiB: its demand gives the window back (if it was not already).
            if log.withLock({ $0.whilePaused.isEmpty }) {
                let increment = try connection.awaitWindowUpdate(id)
                log.withLock { $0.onResume = increment }
            }
            connection.sendData(id, body, (512 << 10)..<total, end: true)
            steps.peerFinished(4)
            _ = steps.peerWaits(for: 4)
        }
        defer { peer.close() }
        try await withLeakCheck { leaks throws in
            leaks.watch(port: peer.port)
            let transport = leaks.native(NativeTransport.Configuration().speakingH2C())
            defer { transport.shutdown() }
            let request = TransportRequest(method: .get, url: peer.url("/body"), timeout: .seconds(20))
            let response = try await transport.stream(request, observer: IgnoringTransportObserver())
            var reader = BodyReader(response.body)
            #expect(await steps.testWaits(for: 1))
            try await reader.take(upTo: 128 << 10)
            steps.testFinished(1)
            #expect(await steps.testWaits(for: 2))
            try await reader.take(upTo: 256 << 10)
            steps.testFinished(2)
            #expect(await steps.testWaits(for: 3))
            let paused = log.withLock { $0 }
            #expect(paused.whilePaused.isEmpty, "WINDOW_UPDATE \(paused.whilePaused) for a reader holding a full buffer")
            // What the peer may send, past what the reader took, stays within the documented
            // bound: the reader's buffer plus one stream window.
            let sent = 512 << 10
            let windowLeft = Self.streamWindow - sent + paused.whilePaused.reduce(0, +)
            #expect(sent + windowLeft - reader.received.count <= Self.buffered + Self.streamWindow)
            try await reader.take(upTo: 384 << 10)
            steps.testFinished(3)
            #expect(await steps.testWaits(for: 4))
            #expect(log.withLock { $0.onResume } == 512 << 10, "the window given back when the reader took half its buffer (none when it went back early)")
            try await reader.take(upTo: total)
            #expect(try await reader.atEnd())
            #expect(reader.received == Data(body))
            steps.testFinished(4)
        }
    }

    @Test("a reader's demand that reaches the loop after the loop filled its buffer again is stale: the stream's window stays closed until the reader takes half its buffer again, then opens, and the body arrives whole")
    func staleDemandKeepsWindowClosed() async throws {
        // A buffer of two DATA frames, so that one frame delivered after the demand fills it
        // again; the demand's staleness does not depend on the size.
        let highWaterMark = 2 * Self.frame
        let total = 256 << 10
        let body = Self.body(total)
        let steps = Lockstep()
        let log = Locked(WindowLog())
        let peer = try HTTP2ScriptedPeer { _, connection in
            try connection.start()
            guard let request = try connection.nextRequest() else { throw PeerError("no request") }
            let id = request.streamID
            connection.respond(id, headers: [("content-length", "\(total)")], end: false)
            // Two frames fill the reader's buffer: its stream pauses.
            connection.sendData(id, body, 0..<(2 * Self.frame))
            _ = try connection.fence()
            steps.peerFinished(1)
            guard steps.peerWaits(for: 1) else { return }
            // A third frame: the test holds the loop just before it is delivered, and the reader
            // takes a frame meanwhile, so that its demand is queued on the loop behind it.
            connection.sendData(id, body, (2 * Self.frame)..<(3 * Self.frame))
            let frames = try connection.fence() + connection.fence()
            log.withLock { $0.whilePaused = frames.streamWindowUpdates(id) }
            steps.peerFinished(2)
            guard steps.peerWaits(for: 2) else { return }
            // The reader took a frame more: a fresh demand gives the window back.
            if log.withLock({ $0.whilePaused.isEmpty }) {
                let increment = try connection.awaitWindowUpdate(id)
                log.withLock { $0.onResume = increment }
            }
            connection.sendData(id, body, (3 * Self.frame)..<total, end: true)
            steps.peerFinished(3)
            _ = steps.peerWaits(for: 3)
        }
        defer { peer.close() }
        try await withLeakCheck { leaks throws in
            leaks.watch(port: peer.port)
            let transport = leaks.native(NativeTransport.Configuration().speakingH2C())
            defer { transport.shutdown() }
            let request = TransportRequest(method: .get, url: peer.url("/body"), timeout: .seconds(20))
            let gate = BodyGate()
            let buffer = BodyStreamBuffer(highWaterMark: highWaterMark)
            _ = try await transport.exchange(request, target: nil, observer: gate, stream: buffer)
            var reader = BodyReader(HTTPBodyStream(buffer: buffer))
            #expect(await steps.testWaits(for: 1))
            gate.arm()
            steps.testFinished(1)
            #expect(await gate.waitUntilHolding(), "the third frame never reached the reader")
            // The loop is inside the delivery of the third frame. Taking the first frame brings the
            // buffer to half: the demand hops onto the loop, behind the delivery that fills the
            // buffer again.
            try await reader.take(upTo: Self.frame)
            gate.release()
            #expect(await steps.testWaits(for: 2))
            let whilePaused = log.withLock { $0.whilePaused }
            #expect(whilePaused.isEmpty, "WINDOW_UPDATE \(whilePaused) for a reader holding a full buffer")
            try await reader.take(upTo: 2 * Self.frame)
            steps.testFinished(2)
            #expect(await steps.testWaits(for: 3))
            #expect(log.withLock { $0.onResume } == 3 * Self.frame, "the window given back when the reader took half its buffer (none when it went back early)")
            try await reader.take(upTo: total)
            #expect(try await reader.atEnd())
            #expect(reader.received == Data(body))
            steps.testFinished(3)
        }
    }
}
