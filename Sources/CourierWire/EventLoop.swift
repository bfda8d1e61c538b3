#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif
import CLinuxSystem
import Dispatch
import Synchronization

/// A reactor: one thread that waits in `epoll_wait` and runs everything confined to it.
///
/// An event loop runs four kinds of work on its thread, in this order on each turn:
/// readiness handlers of registered descriptors, expired timers, closures
/// submitted with ``execute(_:)`` together with the jobs of tasks that run on the loop as
/// their executor (one queue, in submission order), and closures deferred with
/// ``atEndOfTurn(_:)``.
///
/// - ``execute(_:)`` and ``scheduleTimer(after:_:)`` may be called from any thread;
///   a cross-thread submission wakes the loop through an `eventfd`.
/// - ``register(fd:interest:handler:)``, ``modify(fd:interest:)`` and
///   ``deregister(fd:)`` may only be called on the loop's thread (from a handler, a
///   timer or an executed closure). Calling them elsewhere is a programming error
///   and stops the process.
/// - State that only the loop's thread touches can be held in a ``LoopBound``.
///
/// A loop runs until ``shutdown()``; it must be shut down explicitly (its thread
/// keeps it alive). Shutting down drops every registration and pending timer
/// without calling them; descriptors stay open and belong to whoever registered them.
public final class EventLoop: Sendable, CustomStringConvertible {
    /// The loop's name, also given to its thread (first 15 bytes).
    public let name: String

    let epollFD: Int32
    let wakeFD: Int32
    /// Loop-confined state: registrations and timers. Only touched on the loop thread.
    let state: LoopState
    let timerCounters = TimerCounters()
    private let queue = Mutex(Submissions())
    private let loopThread = Atomic<UInt>(0)
    private let threadHandle = Atomic<UInt>(0)
    private let joinState = Mutex(JoinState.notJoined)
    private let joined = DispatchGroup()

    /// One piece of submitted work: a closure (``execute(_:)``), or a Swift task's job run on
    /// the loop as its executor, kept as it is so that submitting it allocates nothing.
    enum Work: Sendable {
        case closure(@Sendable () -> Void)
        case task(UnownedJob)
    }

    /// Work submitted with `execute` or as a task executor, and the loop's phase.
    private struct Submissions {
        var jobs: [Work] = []
        var wakePending = false
        var phase = Phase.running
    }

    private enum Phase { case running, stopping, stopped }
    private enum JoinState { case notJoined, joining, joined }

    /// The token in `epoll_event.data` that marks the wake-up `eventfd`.
    static let wakeToken = UInt64.max

    /// Creates the loop and starts its thread.
    ///
    /// - Parameter name: A name for diagnostics and for the thread; defaults to `"courier-loop"`.
    /// - Throws: ``SocketError`` if `epoll_create1`, `eventfd` or `pthread_create` fails.
    public init(name: String = "courier-loop") throws(SocketError) {
        self.name = name
        let epoll = LinuxAPI.createEpoll()
        if epoll < 0 { throw SocketError.current("epoll_create1") }
        let wake = LinuxAPI.createEventFD()
        if wake < 0 {
            let error = SocketError.current("eventfd")
            Glibc.close(epoll)
            throw error
        }
        // Edge-triggered: every write to the counter reports one event, so the loop never reads
        // it (one system call fewer per wake-up). At one write per wake-up, the 64-bit counter
        // cannot fill.
        let added = LinuxAPI.control(
            epoll: epoll, operation: LinuxAPI.epollCtlAdd, fd: wake,
            events: LinuxAPI.epollIn | LinuxAPI.epollEdgeTriggered, token: EventLoop.wakeToken
        )
        if added != 0 {
            let error = SocketError.current("epoll_ctl(ADD eventfd)")
            Glibc.close(wake)
            Glibc.close(epoll)
            throw error
        }
        self.epollFD = epoll
        self.wakeFD = wake
        self.state = LoopState()
        joined.enter()
        do {
            let handle = try LoopThread.start(name: name) { [self] in
                self.run()
            }
            threadHandle.store(handle, ordering: .releasing)
        } catch {
            joinState.withLock { $0 = .joined }
            joined.leave()
            throw error
        }
    }

    deinit {
        // The thread holds a strong reference while it runs, so getting here means it
        // has finished (or never started). Release its resources if nobody joined it.
        let needsDetach = joinState.withLock { state -> Bool in
            if case .notJoined = state { state = .joined; return true }
            return false
        }
        let handle = threadHandle.load(ordering: .acquiring)
        if needsDetach, handle != 0 { pthread_detach(pthread_t(handle)) }
        Glibc.close(wakeFD)
        Glibc.close(epollFD)
    }

    /// `"EventLoop(name)"`.
    public var description: String { "EventLoop(\(name))" }

    /// Whether the calling thread is this loop's thread.
    public var inEventLoop: Bool {
        let owner = loopThread.load(ordering: .acquiring)
        return owner != 0 && pthread_equal(pthread_t(owner), pthread_self()) != 0
    }

    /// Stops the process unless called on this loop's thread.
    ///
    /// - Parameters:
    ///   - file: The caller's file (for the message).
    ///   - line: The caller's line.
    public func preconditionInEventLoop(file: StaticString = #fileID, line: UInt = #line) {
        precondition(inEventLoop, "must be called on \(name)'s thread", file: file, line: line)
    }

    /// Runs `work` on the loop's thread as soon as possible, after the current turn.
    ///
    /// Callable from any thread, including the loop's own (the work then runs on the
    /// next turn, never re-entrantly). Submissions run in order.
    ///
    /// - Parameter work: The closure to run.
    /// - Returns: `false` if the loop is shutting down or shut down; the work was
    ///   dropped without running.
    @discardableResult
    public func execute(_ work: @escaping @Sendable () -> Void) -> Bool {
        submit(.closure(work))
    }

    /// Queues `work` for the loop's thread, after the current turn, waking the loop unless it is
    /// the caller or a wake-up is already on its way; `false` when the loop no longer accepts
    /// work.
    func submit(_ work: Work) -> Bool {
        let onLoop = inEventLoop
        let (accepted, wake) = queue.withLock { queue -> (Bool, Bool) in
            guard case .running = queue.phase else { return (false, false) }
            queue.jobs.append(work)
            // The loop checks its queue before sleeping, so its own submissions need no wake-up.
            if onLoop || queue.wakePending { return (true, false) }
            queue.wakePending = true
            return (true, true)
        }
        if wake { signalWake() }
        return accepted
    }

    /// Whether the loop still accepts work (not shutting down or shut down).
    public var isRunning: Bool {
        queue.withLock { queue in
            if case .running = queue.phase { return true }
            return false
        }
    }

    /// Stops the loop and waits for its thread to end. Idempotent and callable from any thread.
    ///
    /// Closures already submitted with ``execute(_:)``, and task jobs already queued, still run;
    /// later submissions are refused (a task's job then runs on the global executor).
    /// Registrations and pending timers are dropped without being called. When called on the
    /// loop's own thread the loop stops after the current turn but cannot be waited for.
    public func shutdown() {
        let first = queue.withLock { queue -> Bool in
            guard case .running = queue.phase else { return false }
            queue.phase = .stopping
            return true
        }
        if first { signalWake() }
        if inEventLoop { return }
        let mustJoin = joinState.withLock { state -> Bool in
            if case .notJoined = state { state = .joining; return true }
            return false
        }
        if mustJoin {
            let handle = threadHandle.load(ordering: .acquiring)
            if handle != 0 { pthread_join(pthread_t(handle), nil) }
            joinState.withLock { $0 = .joined }
            joined.leave()
        } else {
            joined.wait()
        }
    }

    private func signalWake() {
        var one: UInt64 = 1
        _ = Glibc.write(wakeFD, &one, MemoryLayout<UInt64>.size)
    }

    /// The loop thread's body.
    private func run() {
        loopThread.store(UInt(pthread_self()), ordering: .releasing)
        let events = UnsafeMutableBufferPointer<epoll_event>.allocate(capacity: 512)
        events.initialize(repeating: epoll_event())
        defer { events.deallocate() }
        var batch: [Work] = []
        while true {
            let idle = state.endOfTurn.isEmpty && queue.withLock { $0.jobs.isEmpty && $0.phase == .running }
            let timeout = idle ? timeoutForNextTimer() : 0
            let ready = epoll_wait(epollFD, events.baseAddress, Int32(events.count), timeout)
            if ready < 0 {
                let code = errno
                if code == EINTR { continue }
                // epoll_wait only fails on programming errors (EBADF, EFAULT, EINVAL).
                fatalError("\(name): epoll_wait failed: \(SocketError(operation: "epoll_wait", errno: code))")
            }
            for event in events[..<Int(ready)] {
                let token = event.data.u64
                if token != EventLoop.wakeToken {
                    dispatch(token: token, events: event.events)
                }
            }
            runExpiredTimers()
            let phase = queue.withLock { queue -> Phase in
                swap(&queue.jobs, &batch)
                queue.wakePending = false
                return queue.phase
            }
            for work in batch { run(work) }
            batch.removeAll(keepingCapacity: true)
            runEndOfTurnWork()
            if case .stopping = phase { break }
        }
        finish()
    }

    /// Runs one piece of submitted work on the loop's thread.
    private func run(_ work: Work) {
        switch work {
        case .closure(let closure): closure()
        case .task(let job): job.runSynchronously(on: asUnownedTaskExecutor())
        }
    }

    /// Runs what is left in the queue, then releases registrations and timers.
    private func finish() {
        let leftovers = queue.withLock { queue -> [Work] in
            queue.phase = .stopped
            let jobs = queue.jobs
            queue.jobs = []
            return jobs
        }
        for work in leftovers { run(work) }
        let registrations = state.removeAllRegistrations()
        let timers = state.timers.removeAll()
        for timer in timers { _ = timer.take() }
        let deferred = state.endOfTurn
        state.endOfTurn = []
        // Release the handlers, timer and deferred closures here, on the loop thread, before it ends.
        withExtendedLifetime((registrations, timers, deferred)) {}
    }
}

/// Loop-confined mutable state of an ``EventLoop``.
///
/// `@unchecked Sendable` because it is shared by reference with the loop's own
/// closures but only ever read or written on the loop's thread: every access goes
/// through the loop thread's run function, its handlers, timers and executed
/// closures, or the registration methods that check ``EventLoop/inEventLoop``.
final class LoopState: @unchecked Sendable {
    var registrations: [EventLoop.Registration?] = []
    var registrationCount = 0
    var nextGeneration: UInt32 = 0
    var timers = TimerHeap()
    /// Work deferred with `atEndOfTurn`, run after this turn's submitted closures.
    var endOfTurn: [() -> Void] = []

    func removeAllRegistrations() -> [EventLoop.Registration] {
        let all = registrations.compactMap { $0 }
        registrations = []
        registrationCount = 0
        return all
    }
}
