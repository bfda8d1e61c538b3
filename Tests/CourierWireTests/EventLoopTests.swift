import CourierTestServer
import Dispatch
import Synchronization
import Testing
@testable import CourierWire
#if canImport(Glibc)
import Glibc
#endif

@Suite("EventLoop", .ownThread)
struct EventLoopTests {
    @Test("execute runs work on the loop thread, in submission order")
    func executeOrder() throws {
        let loop = try EventLoop(name: "test-exec")
        defer { loop.shutdown() }
        #expect(!loop.inEventLoop)
        let seen = Recorder<(Int, Bool)>()
        for index in 0..<1000 {
            #expect(loop.execute { seen.append((index, loop.inEventLoop)) })
        }
        #expect(seen.wait(for: 1000))
        #expect(seen.values.map(\.0) == Array(0..<1000))
        #expect(seen.values.allSatisfy { $0.1 })
    }

    @Test("execute from many threads at once loses nothing")
    func executeConcurrently() throws {
        let loop = try EventLoop(name: "test-conc")
        defer { loop.shutdown() }
        let seen = Recorder<Int>()
        DispatchQueue.concurrentPerform(iterations: 8) { thread in
            for index in 0..<500 { loop.execute { seen.append(thread * 1000 + index) } }
        }
        #expect(seen.wait(for: 4000))
        #expect(Set(seen.values).count == 4000)
    }

    @Test("work submitted from the loop itself runs on a later turn, not re-entrantly")
    func executeFromLoop() throws {
        let loop = try EventLoop(name: "test-reent")
        defer { loop.shutdown() }
        let order = Recorder<String>()
        loop.execute {
            loop.execute { order.append("inner") }
            order.append("outer")
        }
        #expect(order.wait(for: 2))
        #expect(order.values == ["outer", "inner"])
    }

    @Test("work deferred to the end of a turn runs after that turn's submitted closures, in order; work it defers runs on the next turn without waiting")
    func endOfTurn() throws {
        let loop = try EventLoop(name: "test-end")
        defer { loop.shutdown() }
        let order = Recorder<String>()
        let gate = DispatchSemaphore(value: 0)
        // Holds the loop so that the next two submissions run in one turn.
        loop.execute { gate.wait() }
        loop.execute {
            order.append("job 1")
            loop.atEndOfTurn {
                order.append("end 1")
                loop.atEndOfTurn { order.append("end 2") }
            }
            loop.atEndOfTurn { order.append("end 1b") }
        }
        loop.execute { order.append("job 2") }
        gate.signal()
        #expect(order.wait(for: 5))
        #expect(order.values == ["job 1", "job 2", "end 1", "end 1b", "end 2"])
    }

    @Test("shutdown is idempotent, concurrent-safe, and refuses later work")
    func shutdownIdempotent() throws {
        let loop = try EventLoop(name: "test-shut")
        let ran = Recorder<Int>()
        loop.execute { ran.append(1) }
        DispatchQueue.concurrentPerform(iterations: 4) { _ in loop.shutdown() }
        loop.shutdown()
        #expect(ran.values == [1])
        #expect(!loop.isRunning)
        #expect(!loop.execute { ran.append(2) })
        #expect(ran.values == [1])
    }

    @Test("shutdown releases handlers and pending timers")
    func shutdownReleases() throws {
        let loop = try EventLoop(name: "test-release")
        let (a, b) = try Socket.makePair()
        defer { a.close(); b.close() }
        let handlerBox: WeakBox
        let timerBox: WeakBox
        do {
            let handlerCanary = Canary()
            let timerCanary = Canary()
            handlerBox = WeakBox(handlerCanary)
            timerBox = WeakBox(timerCanary)
            try onLoop(loop) {
                try loop.register(fd: a.descriptor, interest: .readable) { _ in _ = handlerCanary }
            }
            loop.scheduleTimer(after: .seconds(3600)) { _ = timerCanary }
        }
        #expect(handlerBox.isAlive)
        #expect(timerBox.isAlive)
        loop.shutdown()
        #expect(!handlerBox.isAlive)
        #expect(!timerBox.isAlive)
    }

    @Test("a readable descriptor calls its handler; modify and deregister take effect")
    func registration() throws {
        let loop = try EventLoop(name: "test-reg")
        defer { loop.shutdown() }
        let (a, b) = try Socket.makePair()
        defer { a.close(); b.close() }
        let events = Recorder<EventLoop.Readiness>()
        try onLoop(loop) {
            try loop.register(fd: a.descriptor, interest: .readable) { readiness in
                events.append(readiness)
                var buffer = [UInt8](repeating: 0, count: 64)
                _ = buffer.withUnsafeMutableBytes { try? a.read(into: $0) }
            }
        }
        let written = try [UInt8]("ping".utf8).withUnsafeBytes { try b.write($0) }
        #expect(written == .bytes(4))
        #expect(events.wait(for: 1))
        #expect(events.values.first?.contains(.readable) == true)

        // Double registration is refused with EEXIST.
        let duplicate = try onLoop(loop) { () -> Int32 in
            do throws(SocketError) {
                try loop.register(fd: a.descriptor, interest: .readable) { _ in }
                return 0
            } catch {
                return error.errno
            }
        }
        #expect(duplicate == EEXIST)

        // Writable interest: an empty socket buffer is writable at once.
        try onLoop(loop) { try loop.modify(fd: a.descriptor, interest: [.readable, .writable]) }
        #expect(events.wait(for: 2))
        #expect(events.values.dropFirst().contains { $0.contains(.writable) })
        let registered = try onLoop(loop) { () -> (EventLoop.Interest?, Int) in
            let interest = loop.interest(for: a.descriptor)
            loop.deregister(fd: a.descriptor)
            return (interest, loop.registeredCount)
        }
        #expect(registered.0 == [.readable, .writable])
        #expect(registered.1 == 0)
        let countAfter = events.values.count
        _ = try [UInt8]("more".utf8).withUnsafeBytes { try b.write($0) }
        // A turn of the loop passes; the deregistered handler must not run again.
        try onLoop(loop) {}
        try onLoop(loop) {}
        #expect(events.values.count == countAfter)
    }

    @Test("modify of an unregistered descriptor throws ENOENT")
    func modifyUnknown() throws {
        let loop = try EventLoop(name: "test-enoent")
        defer { loop.shutdown() }
        let code = try onLoop(loop) { () -> Int32 in
            do throws(SocketError) {
                try loop.modify(fd: 9999, interest: .readable)
                return 0
            } catch {
                return error.errno
            }
        }
        #expect(code == ENOENT)
    }

    @Test("a peer hang-up is reported")
    func hangup() throws {
        let loop = try EventLoop(name: "test-hup")
        defer { loop.shutdown() }
        let (a, b) = try Socket.makePair()
        defer { a.close() }
        let events = Recorder<EventLoop.Readiness>()
        try onLoop(loop) {
            try loop.register(fd: a.descriptor, interest: .none) { readiness in
                events.append(readiness)
                loop.deregister(fd: a.descriptor)
            }
        }
        b.close()
        #expect(events.wait(for: 1))
        #expect(events.values.first?.contains(.hangup) == true)
    }

    @Test("EventLoopGroup hands out loops round-robin and shuts them all down")
    func group() throws {
        let group = try EventLoopGroup(count: 3, name: "grp")
        let picks = (0..<6).map { _ in group.next() }
        #expect(picks[0] === group.loops[0])
        #expect(picks[1] === group.loops[1])
        #expect(picks[2] === group.loops[2])
        #expect(picks[3] === group.loops[0])
        #expect(Set(group.loops.map(\.name)) == ["grp-0", "grp-1", "grp-2"])
        group.shutdown()
        group.shutdown()
        #expect(group.loops.allSatisfy { !$0.isRunning })
    }

    @Test("a shut-down loop is freed, and freeing it closes its descriptors")
    func noDescriptorLeak() throws {
        // The descriptors are closed by the loop's deinit. Their numbers cannot be checked once
        // closed: the tests running in parallel reuse the lowest free numbers at once.
        for index in 0..<20 {
            weak var released: EventLoop?
            do {
                let loop = try EventLoop(name: "leak-\(index)")
                released = loop
                #expect(descriptorTarget(loop.epollFD)?.contains("eventpoll") == true)
                #expect(descriptorTarget(loop.wakeFD)?.contains("eventfd") == true)
                try onLoop(loop) {}
                loop.shutdown()
            }
            #expect(released == nil)
        }
    }}

/// What a descriptor of this process refers to (`anon_inode:[eventpoll]`, `socket:[…]`), or `nil`
/// when it is closed.
func descriptorTarget(_ fd: Int32) -> String? {
    var buffer = [CChar](repeating: 0, count: 256)
    let count = readlink("/proc/self/fd/\(fd)", &buffer, buffer.count - 1)
    guard count > 0 else { return nil }
    return String(decoding: buffer[..<count].map { UInt8(bitPattern: $0) }, as: UTF8.self)
}
