@testable import Courier
import Foundation
import Testing

/// The connection machine with a streamed body: chunks handed out as they arrive and never
/// accumulated, no body limit, and reading (with its timeout) paused while the consumer holds
/// enough. On a virtual clock, without sockets.
@Suite("HTTP/1.1 connection state machine: streamed bodies")
struct HTTP1StreamingMachineTests {
    typealias Tests = HTTP1ConnectionStateMachineTests
    static let second = Tests.second

    func describe(_ action: HTTP1ConnectionStateMachine.Action) -> String { Tests.describe(action) }

    @Test("each read's body bytes are handed out at once and not kept; the response completes empty and the connection is reused")
    func chunksAreHandedOut() {
        var rig = Tests.Rig.ready()
        rig.send(Tests.get(streams: true))
        #expect(rig.read("HTTP/1.1 200 OK\r\nContent-Length: 10\r\n\r\nhello") == ["head 200", "body hello 5/10"])
        #expect(rig.machine.body.data.isEmpty)
        #expect(rig.read("world") == ["body world 10/10", "complete 200 '' reuse"])
        #expect(rig.machine.isIdle)
    }

    @Test("a streamed body is not held to maxBodySize, nor its chunk framing: 4 bytes allowed, 3 MiB stream through")
    func noBodyLimit() {
        var rig = Tests.Rig.ready()
        rig.send(Tests.get(maxBody: 4, streams: true))
        #expect(rig.read("HTTP/1.1 200 OK\r\nContent-Length: 12\r\n\r\nhello world!") == ["head 200", "body hello world! 12/12", "complete 200 '' reuse"])
        rig.send(Tests.get(maxBody: 4, streams: true))
        #expect(rig.read("HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n") == ["head 200"])
        let chunk = "100000\r\n" + String(repeating: "x", count: 1 << 20) + "\r\n"
        for _ in 0..<3 {
            #expect(rig.read(chunk).count == 1)
        }
        #expect(rig.read("0\r\n\r\n") == ["complete 200 '' reuse"])
        #expect(rig.machine.body.wireBytes == 3 << 20)
        var collected = Tests.Rig.ready()
        collected.send(Tests.get(maxBody: 4))
        #expect(collected.read("HTTP/1.1 200 OK\r\nContent-Length: 12\r\n\r\nhello world!") == ["fail bodyTooLarge"])
    }

    @Test("chunked bodies stream chunk by chunk")
    func chunked() {
        var rig = Tests.Rig.ready()
        rig.send(Tests.get(streams: true))
        #expect(rig.read("HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n3\r\nabc\r\n") == ["head 200", "body abc 3/?"])
        #expect(rig.read("2\r\nde\r\n0\r\n\r\n") == ["body de 5/?", "complete 200 '' reuse"])
    }

    @Test("paused, the silence timeout does not run; resumed, the server has a whole timeout from then")
    func pauseStopsTheTimeout() {
        var rig = Tests.Rig.ready()
        rig.send(Tests.get(streams: true))
        _ = rig.read("HTTP/1.1 200 OK\r\nContent-Length: 10\r\n\r\nhello", at: 1 * Self.second)
        #expect(describe(rig.machine.consumerPaused()) == "stop reading")
        #expect(rig.machine.readPaused)
        #expect(describe(rig.machine.consumerPaused()) == "none", "paused once")
        #expect(describe(rig.machine.timerFired(at: 60 * Self.second)) == "none")
        #expect(describe(rig.machine.consumerResumed(at: 100 * Self.second)) == "resume reading timer@\(110 * Self.second)")
        #expect(describe(rig.machine.consumerResumed(at: 101 * Self.second)) == "none", "resumed once")
        #expect(describe(rig.machine.timerFired(at: 105 * Self.second)) == "timer@\(110 * Self.second)")
        #expect(describe(rig.machine.timerFired(at: 110 * Self.second)) == "fail timedOut")
    }

    @Test("pausing is only for a streamed body being received; a collected body or an idle connection ignores it")
    func pauseOnlyWhenStreaming() {
        var collected = Tests.Rig.ready()
        collected.send(Tests.get())
        _ = collected.read("HTTP/1.1 200 OK\r\nContent-Length: 10\r\n\r\nhello")
        #expect(describe(collected.machine.consumerPaused()) == "none")
        var idle = Tests.Rig.ready()
        #expect(describe(idle.machine.consumerPaused()) == "none")
        #expect(describe(idle.machine.consumerResumed(at: 0)) == "none")
    }

    @Test("race: the consumer resumes after the body already ended: nothing happens, the connection stays idle")
    func resumeAfterEnd() {
        var rig = Tests.Rig.ready()
        rig.send(Tests.get(streams: true))
        _ = rig.read("HTTP/1.1 200 OK\r\nContent-Length: 10\r\n\r\nhello")
        _ = rig.machine.consumerPaused()
        #expect(rig.read("world") == ["body world 10/10", "complete 200 '' reuse"], "bytes already read are processed while paused")
        #expect(!rig.machine.readPaused, "an idle connection reads again, to see the server close it")
        #expect(describe(rig.machine.consumerResumed(at: 1)) == "none")
        #expect(rig.machine.isIdle && !rig.machine.readPaused)
    }

    @Test("race: the consumer abandons a paused stream: cancel fails the request and closes the connection")
    func cancelWhilePaused() {
        var rig = Tests.Rig.ready()
        rig.send(Tests.get(streams: true))
        _ = rig.read("HTTP/1.1 200 OK\r\nContent-Length: 10\r\n\r\nhello")
        _ = rig.machine.consumerPaused()
        #expect(describe(rig.machine.cancel(with: .cancelled)) == "fail cancelled")
        #expect(rig.machine.state == .closed)
    }

    @Test("the next request on the connection starts unpaused")
    func nextRequestUnpaused() {
        var rig = Tests.Rig.ready()
        rig.send(Tests.get(streams: true))
        _ = rig.read("HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nh")
        _ = rig.machine.consumerPaused()
        _ = rig.read("i")
        #expect(rig.machine.isIdle)
        rig.send(Tests.get())
        #expect(!rig.machine.readPaused)
        #expect(rig.read("HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok") == ["head 200", "complete 200 'ok' reuse"])
    }
}
