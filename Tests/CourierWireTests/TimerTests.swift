import CourierTestServer
import Dispatch
import Testing
import CourierWire

@Suite("EventLoop timers", .ownThread)
struct TimerTests {
    @Test("timers fire in deadline order on the loop thread")
    func order() throws {
        let loop = try EventLoop(name: "test-timers")
        defer { loop.shutdown() }
        let fired = Recorder<(Int, Bool)>()
        for (index, delay) in [30, 10, 20, 0].enumerated() {
            loop.scheduleTimer(after: .milliseconds(delay)) { fired.append((index, loop.inEventLoop)) }
        }
        #expect(fired.wait(for: 4))
        #expect(fired.values.map(\.0) == [3, 1, 2, 0])
        #expect(fired.values.allSatisfy { $0.1 })
    }

    @Test("a timer does not fire before its deadline")
    func notEarly() throws {
        let loop = try EventLoop(name: "test-early")
        defer { loop.shutdown() }
        let start = EventLoop.now()
        let fired = Recorder<UInt64>()
        loop.scheduleTimer(after: .milliseconds(50)) { fired.append(EventLoop.now()) }
        #expect(fired.wait(for: 1))
        let elapsed = (fired.values.first ?? 0) &- start
        #expect(elapsed >= 50_000_000)
    }

    @Test("cancel prevents firing and releases the closure at once")
    func cancel() throws {
        let loop = try EventLoop(name: "test-cancel")
        defer { loop.shutdown() }
        let fired = Recorder<Int>()
        let box: WeakBox
        let timer: EventLoop.Timer
        do {
            let canary = Canary()
            box = WeakBox(canary)
            timer = loop.scheduleTimer(after: .milliseconds(40)) { _ = canary; fired.append(1) }
        }
        #expect(timer.isPending)
        #expect(timer.cancel())
        #expect(!timer.cancel())
        #expect(!timer.isPending)
        #expect(!box.isAlive)
        loop.scheduleTimer(after: .milliseconds(80)) { fired.append(2) }
        #expect(fired.wait(for: 1))
        #expect(fired.values == [2])
    }

    @Test("many cancelled timers do not stop the rest from firing")
    func manyCancelled() throws {
        let loop = try EventLoop(name: "test-many")
        defer { loop.shutdown() }
        let fired = Recorder<Int>()
        var timers: [EventLoop.Timer] = []
        for index in 0..<5000 {
            timers.append(loop.scheduleTimer(after: .seconds(60 + index)) { fired.append(-1) })
        }
        for timer in timers { timer.cancel() }
        for index in 0..<100 {
            loop.scheduleTimer(after: .milliseconds(index % 10)) { fired.append(index) }
        }
        #expect(fired.wait(for: 100))
        #expect(fired.values.count == 100)
        #expect(!fired.values.contains(-1))
    }

    @Test("timers scheduled from the loop itself and huge delays are handled")
    func fromLoopAndHuge() throws {
        let loop = try EventLoop(name: "test-huge")
        defer { loop.shutdown() }
        let fired = Recorder<String>()
        let huge = loop.scheduleTimer(after: .seconds(Int64.max)) { fired.append("huge") }
        loop.execute {
            loop.scheduleTimer(after: .milliseconds(5)) { fired.append("inner") }
        }
        loop.scheduleTimer(after: .seconds(-5)) { fired.append("negative") }
        #expect(fired.wait(for: 2))
        #expect(Set(fired.values) == ["inner", "negative"])
        #expect(huge.isPending)
        huge.cancel()
    }
}
