@testable import Courier
import Testing

/// The native transport's timeline arithmetic, on made-up clock readings (no sockets, no waiting).
@Suite("Native transport: exchange timeline")
struct ExchangeTimelineTests {
    /// A connection opened by name over TLS: resolved 110–130, connected 130–150, shook hands 150–190.
    static let opened = ConnectionTimeline(resolveStart: 110, resolveEnd: 130, connectStart: 130, connectEnd: 150,
                                           handshakeStart: 150, handshakeEnd: 190)

    static func metrics(_ timeline: ExchangeTimeline) -> TransportMetrics {
        var metrics = TransportMetrics()
        timeline.fill(&metrics)
        return metrics
    }

    @Test("the first exchange of a connection gets every phase, in order")
    func fresh() {
        var timeline = ExchangeTimeline(created: 100)
        timeline.assign(at: 190, connection: Self.opened, reused: false)
        timeline.recordRequestWritten(at: 200)
        timeline.recordResponseStarted(at: 260)
        let metrics = Self.metrics(timeline)
        #expect(metrics.queued == .nanoseconds(90))
        #expect(metrics.dnsLookup == .nanoseconds(20))
        #expect(metrics.connect == .nanoseconds(20))
        #expect(metrics.tlsHandshake == .nanoseconds(40))
        #expect(metrics.requestSent == .nanoseconds(10))
        #expect(metrics.firstByte == .nanoseconds(60))
        #expect(!metrics.reusedConnection)
    }

    @Test("a reused connection reports no connection phases")
    func reused() {
        var timeline = ExchangeTimeline(created: 1000)
        timeline.assign(at: 1005, connection: Self.opened, reused: true)
        timeline.recordRequestWritten(at: 1010)
        timeline.recordResponseStarted(at: 1100)
        let metrics = Self.metrics(timeline)
        #expect(metrics.reusedConnection)
        #expect(metrics.dnsLookup == nil)
        #expect(metrics.connect == nil)
        #expect(metrics.tlsHandshake == nil)
        #expect(metrics.queued == .nanoseconds(5))
        #expect(metrics.requestSent == .nanoseconds(5))
        #expect(metrics.firstByte == .nanoseconds(90))
    }

    @Test("a numeric address over http has no resolution and no handshake")
    func skippedPhases() {
        var timeline = ExchangeTimeline(created: 0)
        timeline.assign(at: 30, connection: ConnectionTimeline(connectStart: 10, connectEnd: 30), reused: false)
        let metrics = Self.metrics(timeline)
        #expect(metrics.connect == .nanoseconds(20))
        #expect(metrics.dnsLookup == nil)
        #expect(metrics.tlsHandshake == nil)
    }

    @Test("an answer before the request was written: firstByte is zero, or counts from the start of sending")
    func earlyAnswer() {
        var answeredWhileWriting = ExchangeTimeline(created: 0)
        answeredWhileWriting.assign(at: 10, connection: ConnectionTimeline(), reused: true)
        answeredWhileWriting.recordResponseStarted(at: 50)
        answeredWhileWriting.recordRequestWritten(at: 80)
        #expect(Self.metrics(answeredWhileWriting).firstByte == .zero)
        #expect(Self.metrics(answeredWhileWriting).requestSent == .nanoseconds(70))

        var neverWritten = ExchangeTimeline(created: 0)
        neverWritten.assign(at: 10, connection: ConnectionTimeline(), reused: true)
        neverWritten.recordResponseStarted(at: 50)
        #expect(Self.metrics(neverWritten).requestSent == nil)
        #expect(Self.metrics(neverWritten).firstByte == .nanoseconds(40))
    }

    @Test("only the first write and the first response byte count")
    func firstMomentsKept() {
        var timeline = ExchangeTimeline(created: 0)
        timeline.assign(at: 10, connection: ConnectionTimeline(), reused: true)
        timeline.recordRequestWritten(at: 20)
        timeline.recordRequestWritten(at: 90)
        timeline.recordResponseStarted(at: 30)
        timeline.recordResponseStarted(at: 95)
        #expect(Self.metrics(timeline).requestSent == .nanoseconds(10))
        #expect(Self.metrics(timeline).firstByte == .nanoseconds(10))
    }

    @Test("a re-send on a fresh connection after a stale one replaces what the stale one measured")
    func staleRetry() {
        var timeline = ExchangeTimeline(created: 0)
        timeline.assign(at: 5, connection: ConnectionTimeline(), reused: true)
        timeline.recordRequestWritten(at: 8)
        timeline.assign(at: 400, connection: Self.opened, reused: false)
        let beforeWrite = Self.metrics(timeline)
        #expect(beforeWrite.requestSent == nil)
        #expect(!beforeWrite.reusedConnection)
        #expect(beforeWrite.tlsHandshake == .nanoseconds(40))
        #expect(beforeWrite.queued == .nanoseconds(400))
        timeline.recordRequestWritten(at: 410)
        #expect(Self.metrics(timeline).requestSent == .nanoseconds(10))
    }

    @Test("an exchange that never got a connection reports no phase, and nothing before assignment counts")
    func neverAssigned() {
        var timeline = ExchangeTimeline(created: 0)
        timeline.recordRequestWritten(at: 10)
        timeline.recordResponseStarted(at: 20)
        let metrics = Self.metrics(timeline)
        #expect(metrics.queued == nil)
        #expect(metrics.requestSent == nil)
        #expect(metrics.firstByte == nil)
        #expect(!metrics.reusedConnection)
    }
}
