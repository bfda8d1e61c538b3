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

    /// On the peer: takes the client's preface and request, and answers with a head announcing
    /// `bodyLength` octets, leaving the stream open for the body.
    /// - Returns: the request's stream.
    static func answerHead(_ connection: HTTP2PeerConnection, bodyLength: Int) throws -> UInt32 {
        try connection.start()
        guard let request = try connection.nextRequest() else { throw PeerError("no request") }
        connection.respond(request.streamID, headers: [("content-length", "\(bodyLength)")], end: false)
        return request.streamID
    }

    /// On the peer, once the reader holds a full buffer: logs the stream's WINDOW_UPDATEs among
    /// `frames` (what came while it was paused), finishes `step`, and waits for the reader to take
    /// its buffer down to half; then logs the window its demand gives back (unless the window
    /// went back while it was paused), sends `body[rest]` ending the stream, finishes `step + 1`,
    /// and keeps the connection open until the test has finished it too.
    static func resume(_ connection: HTTP2PeerConnection, _ id: UInt32, pausedFrames frames: [HTTP2Frame], log: Locked<WindowLog>,
                       steps: Lockstep, step: Int, sending body: [UInt8], _ rest: Range<Int>) throws {
        log.withLock { $0.whilePaused = frames.streamWindowUpdates(id) }
        steps.peerFinished(step)
        guard steps.peerWaits(for: step) else { return }
        if log.withLock({ $0.whilePaused.isEmpty }) {
            let increment = try connection.awaitWindowUpdate(id)
            log.withLock { $0.onResume = increment }
        }
        connection.sendData(id, body, rest, end: true)
        steps.peerFinished(step + 1)
        _ = steps.peerWaits(for: step + 1)
    }

    /// Runs `body` with a tracked h2c transport and a request for the peer's `/body`, and checks
    /// that nothing leaked.
    static func withClient(of peer: HTTP2ScriptedPeer, sourceLocation: SourceLocation = #_sourceLocation,
                           _ body: (NativeTransport, TransportRequest) async throws -> Void) async throws {
        try await withLeakCheck(sourceLocation: sourceLocation) { leaks throws in
            leaks.watch(port: peer.port)
            let transport = leaks.native(NativeTransport.Configuration().speakingH2C())
            defer { transport.shutdown() }
            try await body(transport, TransportRequest(method: .get, url: peer.url("/body"), timeout: .seconds(20)))
        }
    }

    @Test("one read whose DATA reaches half the stream window and fills the reader's buffer gives none of the window back while the reader is paused; the reader taking half its buffer gives it all back, and the body arrives whole")
    func readThatPausesKeepsItsWindow() async throws {
        let total = Self.streamWindow
        let body = Self.body(total)
        let steps = Lockstep()
        let log = Locked(WindowLog())
        let peer = try HTTP2ScriptedPeer { _, connection in
            let id = try Self.answerHead(connection, bodyLength: total)
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
            // The reader then takes 128 KiB.
            try Self.resume(connection, id, pausedFrames: frames, log: log, steps: steps, step: 3, sending: body, (512 << 10)..<total)
        }
        defer { peer.close() }
        try await Self.withClient(of: peer) { transport, request in
            let response = try await transport.stream(request, observer: IgnoringTransportObserver())
            var reader = BodyReader(response.body)
            #expect(await steps.testWaits(for: 1))
            try await reader.take(upTo: 128 << 10)
            steps.testFinished(1)
            #expect(await steps.testWaits(for: 2))
            try await reader.take(upTo: 256 << 10)
            steps.testFinished(2)
            #expect(await steps.testWaits(for: 3))
            #expect(!response.body.buffer.producerMayGoOn, "the reader's buffer is full: its stream is paused")
            let paused = log.withLock { $0 }
            #expect(paused.whilePaused.isEmpty, "WINDOW_UPDATE \(paused.whilePaused) for a reader holding a full buffer")
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
            let id = try Self.answerHead(connection, bodyLength: total)
            // Two frames fill the reader's buffer: its stream pauses.
            connection.sendData(id, body, 0..<(2 * Self.frame))
            _ = try connection.fence()
            steps.peerFinished(1)
            guard steps.peerWaits(for: 1) else { return }
            // A third frame: the test holds the loop just before it is delivered, and the reader
            // takes a frame meanwhile, so that its demand is queued on the loop behind it.
            connection.sendData(id, body, (2 * Self.frame)..<(3 * Self.frame))
            let frames = try connection.fence() + connection.fence()
            // The reader then takes a frame more: a fresh demand.
            try Self.resume(connection, id, pausedFrames: frames, log: log, steps: steps, step: 2, sending: body, (3 * Self.frame)..<total)
        }
        defer { peer.close() }
        try await Self.withClient(of: peer) { transport, request in
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
            #expect(buffer.producerMayGoOn, "taking the first frame while the loop is held asked for more")
            gate.release()
            #expect(await steps.testWaits(for: 2))
            #expect(!buffer.producerMayGoOn, "the third frame filled the reader's buffer again")
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
