import Testing
@testable import CourierWire

@Suite("EventLoop as a task executor")
struct EventLoopTaskExecutorTests {
    @Test("a task that prefers the loop runs on the loop's thread, before and after it awaits")
    func runsOnLoop() async throws {
        let loop = try EventLoop(name: "test-texec")
        defer { loop.shutdown() }
        let onLoop = await Task(executorPreference: loop) { () async -> [Bool] in
            let before = loop.inEventLoop
            await Task.yield()
            let afterYield = loop.inEventLoop
            // Resumed from one of the loop's own jobs, as the transport resumes a request.
            await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
                _ = loop.execute { continuation.resume() }
            }
            return [before, afterYield, loop.inEventLoop]
        }.value
        #expect(onLoop == [true, true, true])
    }

    @Test("a task with no preference does not run on the loop")
    func noPreference() async throws {
        let loop = try EventLoop(name: "test-tnone")
        defer { loop.shutdown() }
        let onLoop = await Task { loop.inEventLoop }.value
        #expect(!onLoop)
    }

    @Test("a task that prefers a loop that has stopped still runs to the end, on another thread")
    func stoppedLoop() async throws {
        let loop = try EventLoop(name: "test-tstop")
        loop.shutdown()
        #expect(!loop.isRunning)
        let result = await Task(executorPreference: loop) { () async -> (Bool, Int) in
            await Task.yield()
            return (loop.inEventLoop, 42)
        }.value
        #expect(result.0 == false)
        #expect(result.1 == 42)
    }

    @Test("many tasks on one loop all finish, in any interleaving with the loop's own work")
    func manyTasks() async throws {
        let loop = try EventLoop(name: "test-tmany")
        defer { loop.shutdown() }
        let onLoop = await withTaskGroup(of: Bool.self) { group in
            for _ in 0..<200 {
                group.addTask(executorPreference: loop) {
                    for _ in 0..<5 {
                        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
                            _ = loop.execute { continuation.resume() }
                        }
                    }
                    return loop.inEventLoop
                }
            }
            return await group.reduce(into: [Bool]()) { $0.append($1) }
        }
        #expect(onLoop.count == 200)
        #expect(onLoop.allSatisfy { $0 })
    }
}
