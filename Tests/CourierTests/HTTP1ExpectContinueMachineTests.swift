@testable import Courier
import CourierWire
import Foundation
import Testing

/// `Expect: 100-continue` in the HTTP/1.1 connection state machine, on a virtual clock: the head
/// goes first, the body waits for `100 Continue` or the end of the wait, and a final answer that
/// comes first ends the request without the body.
@Suite("HTTP/1.1 connection state machine: Expect: 100-continue")
struct HTTP1ExpectContinueMachineTests {
    typealias Machine = HTTP1ConnectionStateMachine
    typealias Rig = HTTP1ConnectionStateMachineTests.Rig
    static let second = HTTP1ConnectionStateMachineTests.second

    static func post(timeout: Duration = .seconds(10)) -> Machine.Request {
        var request = HTTP1ConnectionStateMachineTests.get("POST", idempotent: false, expectsContinue: true)
        request.timeout = timeout
        return request
    }

    func describe(_ action: Machine.Action) -> String { HTTP1ConnectionStateMachineTests.describe(action) }

    /// `rig` (a fresh ready one by default) after `request` (``post(timeout:)`` by default)
    /// started and its head was written at `headAt`: its body is held.
    static func holding(headAt: UInt64 = 0, timeout: Duration = .seconds(10), on start: Rig = .ready(),
                        request: Machine.Request? = nil) -> (Rig, String) {
        var rig = start
        _ = rig.machine.requestStarted(request ?? post(timeout: timeout), at: 0)
        #expect(rig.machine.writesHeadOnly && rig.machine.isWriting)
        rig.machine.bytesWritten(120, at: headAt)
        let action = HTTP1ConnectionStateMachineTests.describe(rig.machine.allWritten(at: headAt))
        return (rig, action)
    }

    @Test("the head goes alone; 100 Continue releases the body; the response completes and the connection is reused")
    func continueReleasesBody() {
        var (rig, held) = Self.holding(headAt: 5)
        #expect(held == "await continue timer@\(5 + Self.second)")
        #expect(rig.machine.holdsBody && !rig.machine.isWriting)
        #expect(rig.read("HTTP/1.1 100 Continue\r\n\r\n", at: 7) == ["send body timer@\(7 + 10 * Self.second)"])
        #expect(rig.machine.isWriting && !rig.machine.writesHeadOnly && !rig.machine.holdsBody)
        rig.machine.bytesWritten(1000, at: 8)
        #expect(describe(rig.machine.allWritten(at: 8)) == "written")
        #expect(rig.read("HTTP/1.1 201 Created\r\nContent-Length: 2\r\n\r\nok", at: 9) == ["head 201", "complete 201 'ok' reuse"])
        #expect(rig.machine.state == .idle)
    }

    @Test("a final answer before 100 Continue (a 401) ends the request without its body, and the connection is not reused")
    func finalAnswerWithholdsBody() {
        var (rig, _) = Self.holding()
        #expect(rig.read("HTTP/1.1 401 Unauthorized\r\nContent-Length: 0\r\n\r\n", at: 3) == ["head 401", "complete 401 '' close"])
        #expect(!rig.machine.isWriting && rig.machine.state == .closed)
        #expect(rig.machine.bytesSent == 120, "only the head was sent")
    }

    @Test("100 Continue and a final answer in one read: the body is released and the answer is read from the same bytes")
    func continueAndFinalInOneRead() {
        var (rig, _) = Self.holding()
        #expect(rig.read("HTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 413 Content Too Large\r\nContent-Length: 2\r\n\r\nno", at: 3)
                == ["send body timer@\(3 + 10 * Self.second)", "head 413", "complete 413 'no' close"])
        #expect(rig.machine.state == .closed)
    }

    @Test("race: a final answer arrives while the head is still being written: the body is withheld, never sent at the wait's end")
    func finalHeadWhileHeadStillWriting() {
        var rig = Rig.ready()
        _ = rig.machine.requestStarted(Self.post(), at: 0)
        rig.machine.bytesWritten(60, at: 0)
        #expect(rig.read("HTTP/1.1 413 Content Too Large\r\nContent-Length: 4\r\n\r\nno", at: 1) == ["head 413"])
        rig.machine.bytesWritten(60, at: 2)
        #expect(describe(rig.machine.allWritten(at: 2)) == "watch readable")
        #expect(!rig.machine.isWriting && !rig.machine.holdsBody)
        #expect(!describe(rig.machine.timerFired(at: Self.second + 2)).hasPrefix("send body"))
        #expect(rig.read("pe", at: Self.second + 3) == ["complete 413 'nope' close"])
    }

    @Test("race: the wait ends while a final answer's body is still arriving: the held body never goes")
    func waitEndsDuringFinalAnswer() {
        var (rig, _) = Self.holding()
        #expect(rig.read("HTTP/1.1 413 Content Too Large\r\nContent-Length: 4\r\n\r\nno", at: 3) == ["head 413"])
        let timer = describe(rig.machine.timerFired(at: Self.second))
        #expect(!timer.hasPrefix("send body") && !rig.machine.isWriting, "the wait's end during the answer did \(timer)")
        #expect(rig.read("pe", at: Self.second + 1) == ["complete 413 'nope' close"])
    }

    @Test("without an answer the body goes when the wait ends (1 s, or the request's timeout if shorter); a timer before that re-arms")
    func waitEnds() {
        var (rig, _) = Self.holding(headAt: 0)
        #expect(describe(rig.machine.timerFired(at: Self.second / 2)) == "timer@\(Self.second)")
        // The release arms the silence timeout, counted from the release, not from the head.
        #expect(describe(rig.machine.timerFired(at: Self.second)) == "send body timer@\(11 * Self.second)")
        #expect(rig.machine.isWriting)
        #expect(describe(rig.machine.timerFired(at: 2 * Self.second)) == "timer@\(11 * Self.second)")
        var (short, held) = Self.holding(headAt: 0, timeout: .milliseconds(300))
        #expect(held == "await continue timer@\(300_000_000)")
        #expect(describe(short.machine.timerFired(at: 300_000_000)) == "send body timer@\(600_000_000)")
    }

    @Test("other interim answers (103) leave the body held; a 100 that comes after the wait ended changes nothing")
    func otherInterimAndLateContinue() {
        var (rig, _) = Self.holding()
        #expect(rig.read("HTTP/1.1 103 Early Hints\r\nLink: </a.css>\r\n\r\n", at: 1) == [])
        #expect(rig.machine.holdsBody)
        #expect(describe(rig.machine.timerFired(at: Self.second)) == "send body timer@\(11 * Self.second)")
        #expect(rig.read("HTTP/1.1 100 Continue\r\n\r\n", at: Self.second + 1) == [])
        rig.machine.bytesWritten(1000, at: Self.second + 2)
        #expect(describe(rig.machine.allWritten(at: Self.second + 2)) == "written")
        #expect(rig.read("HTTP/1.1 200 OK\r\nContent-Length: 0\r\n\r\n", at: Self.second + 3) == ["head 200", "complete 200 '' reuse"])
    }

    @Test("race: the peer closes while the body is held: the request fails as before any response (a POST is not repeated)")
    func closeWhileHolding() {
        var (rig, _) = Self.holding()
        #expect(describe(rig.machine.peerClosed(nil)) == "fail connectionLost")
        #expect(rig.machine.state == .closed)
    }

    @Test("race: a reused connection closes while a POST's body is held, or while its head is still going: the server cannot have acted on it, so it goes once more on a fresh connection; once its body went, it fails with staleConnection")
    func staleWhileHolding() {
        var (held, _) = Self.holding(on: HTTP1ConnectionStateMachineTests.reused())
        #expect(held.machine.holdsBody)
        #expect(describe(held.machine.peerClosed(nil)) == "retry")

        var headGoing = HTTP1ConnectionStateMachineTests.reused()
        _ = headGoing.machine.requestStarted(Self.post(), at: 0)
        headGoing.machine.bytesWritten(60, at: 0)
        #expect(describe(headGoing.machine.writeFailed(nil)).hasPrefix("read after write failure"))
        #expect(describe(headGoing.machine.writeFailureDrained(nil)) == "retry")

        var (released, _) = Self.holding(on: HTTP1ConnectionStateMachineTests.reused())
        _ = released.machine.timerFired(at: Self.second)
        #expect(released.machine.isWriting, "the wait ended: the body goes")
        released.machine.bytesWritten(10, at: Self.second)
        #expect(describe(released.machine.peerClosed(nil)) == "fail staleConnection")

        // A retry that meets a stale connection again fails.
        var retry = Self.post()
        retry.isRetry = true
        var (again, _) = Self.holding(on: HTTP1ConnectionStateMachineTests.reused(), request: retry)
        #expect(describe(again.machine.peerClosed(nil)) == "fail staleConnection")
    }

    @Test("race: cancel while the body is held fails the request with cancelled; a later 100 Continue does nothing")
    func cancelWhileHolding() {
        var (rig, _) = Self.holding()
        #expect(describe(rig.machine.cancel(with: .cancelled)) == "fail cancelled")
        #expect(rig.read("HTTP/1.1 100 Continue\r\n\r\n", at: 2) == [])
        #expect(describe(rig.machine.timerFired(at: Self.second)) == "none")
    }

    @Test("a request without Expect: 100-continue never holds its body")
    func noExpectation() {
        var rig = Rig.ready()
        _ = rig.machine.requestStarted(HTTP1ConnectionStateMachineTests.get("POST", idempotent: false), at: 0)
        #expect(!rig.machine.writesHeadOnly)
        rig.machine.bytesWritten(1120, at: 0)
        #expect(describe(rig.machine.allWritten(at: 0)) == "written")
    }
}
