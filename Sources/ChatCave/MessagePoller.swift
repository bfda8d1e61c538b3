import Dispatch
import Synchronization

/// Polls a chatroom for new messages, the way the original app did: `GET …/messages?since=<last
/// seen id>` every 1.5 seconds.
///
/// - Delivers only messages it has not delivered before, in the order they were posted —
///   never a duplicate, even if the server forgets the `since` id and sends everything again.
/// - On a failure it reports the error and waits longer before the next poll: the interval
///   doubles with each failure in a row, up to ``maxBackoff``; a success resets it. A revoked
///   key is not a failure here: the service's re-authentication queue holds the poll until the
///   user has signed in again.
/// - Stops when ``stop()`` is called, or when its owner releases it: the poll in flight is
///   cancelled and nothing more is delivered.
///
/// Deliveries run on the service's ``ChatCaveService/callbackQueue``.
///
/// ```swift
/// let poller = service.makePoller(for: lobby.id)
/// poller.start { messages in messages.forEach { print("\($0.author): \($0.text ?? "")") } }
/// ```
public final class MessagePoller: Sendable {
    /// The room polled.
    public let roomID: String
    /// The pause between two successful polls.
    public let interval: Duration
    /// The longest pause after failures.
    public let maxBackoff: Duration

    private let core: Core
    private let task = Mutex<Task<Void, Never>?>(nil)

    /// Creates a stopped poller; ``ChatCaveService/makePoller(for:since:interval:)`` is the usual way.
    /// - Parameters:
    ///   - service: the service to poll with (kept alive while the poller lives).
    ///   - roomID: the room.
    ///   - since: the last message already seen; `nil` (the default) starts with the whole history.
    ///   - interval: the pause between polls; 1.5 seconds by default.
    ///   - maxBackoff: the longest pause after failures; 30 seconds by default.
    public init(service: ChatCaveService, roomID: String, since: String? = nil,
                interval: Duration = .milliseconds(1_500), maxBackoff: Duration = .seconds(30)) {
        self.roomID = roomID
        self.interval = interval
        self.maxBackoff = max(maxBackoff, interval)
        self.core = Core(service: service, roomID: roomID, since: since)
    }

    deinit {
        stop()
    }

    /// Starts polling at once. Does nothing if it is already running.
    /// - Parameters:
    ///   - onMessages: receives each batch of new messages, oldest first (never empty).
    ///   - onError: receives each failed poll's error (never ``ChatCaveError/cancelled``);
    ///     `nil` by default.
    public func start(onMessages: @escaping @Sendable ([Message]) -> Void,
                      onError: (@Sendable (ChatCaveError) -> Void)? = nil) {
        task.withLock { task in
            guard task == nil else { return }
            let generation = core.activate()
            let (core, interval, maxBackoff) = (self.core, self.interval, self.maxBackoff)
            task = Task {
                await core.run(generation: generation, interval: interval, maxBackoff: maxBackoff,
                               onMessages: onMessages, onError: onError)
            }
        }
    }

    /// Stops polling: cancels the poll in flight; nothing is delivered afterwards, not even
    /// a batch already on its way to the callback queue. It can be started again later and
    /// continues after the last message it delivered.
    public func stop() {
        core.deactivate()
        task.withLock { task in
            defer { task = nil }
            return task
        }?.cancel()
    }

    /// Whether it is polling.
    public var isRunning: Bool {
        task.withLock { $0 != nil }
    }

    /// The id of the last message seen, sent as `since` with the next poll.
    public var lastMessageID: String? {
        core.lastMessageID
    }
}

extension MessagePoller {
    /// The poller's state and loop, separate from the poller so that the loop never keeps the
    /// poller alive.
    final class Core: Sendable {
        private struct State {
            var lastID: String?
            var seen = Set<String>()
            var generation: UInt64 = 0
            var active = false
        }

        let service: ChatCaveService
        let roomID: String
        private let state: Mutex<State>

        init(service: ChatCaveService, roomID: String, since: String?) {
            self.service = service
            self.roomID = roomID
            self.state = Mutex(State(lastID: since))
        }

        var lastMessageID: String? { state.withLock { $0.lastID } }

        func activate() -> UInt64 {
            state.withLock { state in
                state.generation &+= 1
                state.active = true
                return state.generation
            }
        }

        func deactivate() {
            state.withLock { state in
                state.generation &+= 1
                state.active = false
            }
        }

        private func isCurrent(_ generation: UInt64) -> Bool {
            state.withLock { $0.active && $0.generation == generation }
        }

        /// Keeps the messages not delivered before, and moves `since` to the last one received.
        private func accept(_ messages: [Message]) -> [Message] {
            state.withLock { state in
                if let last = messages.last { state.lastID = last.id }
                return messages.filter { state.seen.insert($0.id).inserted }
            }
        }

        func run(generation: UInt64, interval: Duration, maxBackoff: Duration,
                 onMessages: @escaping @Sendable ([Message]) -> Void,
                 onError: (@Sendable (ChatCaveError) -> Void)?) async {
            var failures = 0
            let queue = service.callbackQueue
            while !Task.isCancelled, isCurrent(generation) {
                var delay = interval
                do throws(ChatCaveError) {
                    let messages = try await service.fetchMessages(for: roomID, since: lastMessageID)
                    failures = 0
                    let fresh = accept(messages)
                    if !fresh.isEmpty {
                        queue.async { [self] in
                            if isCurrent(generation) { onMessages(fresh) }
                        }
                    }
                } catch {
                    if error == .cancelled || Task.isCancelled { return }
                    failures += 1
                    delay = min(interval * (1 << min(failures, 16)), maxBackoff)
                    if let onError {
                        queue.async { [self] in
                            if isCurrent(generation) { onError(error) }
                        }
                    }
                }
                do {
                    try await Task.sleep(for: delay)
                } catch {
                    return
                }
            }
        }
    }
}
