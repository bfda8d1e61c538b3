import CourierTestServer
import Testing
import CourierWire

@Suite("LoopBound", .ownThread)
struct LoopBoundTests {
    @Test("loop-confined state is shared by copies and changed only on the loop")
    func sharedState() throws {
        let loop = try EventLoop(name: "test-bound")
        defer { loop.shutdown() }
        let counter = LoopBound(sending: [Int](), to: loop)
        let copy = counter
        let done = Recorder<Int>()
        for index in 0..<100 {
            counter.run { $0.append(index) }
        }
        loop.execute {
            copy.value.append(100)
            done.append(copy.withValue { $0.count })
        }
        #expect(done.wait(for: 1))
        #expect(done.values == [101])
        let snapshot = try onLoop(loop) { counter.value }
        #expect(snapshot == Array(0...100))
        let onLoopCopy = try onLoop(loop) { () -> Int in
            let local = LoopBound("made on the loop", on: loop)
            return local.value.count
        }
        #expect(onLoopCopy == 16)
    }
}
