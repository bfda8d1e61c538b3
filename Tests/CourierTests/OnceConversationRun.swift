@testable import Courier
import CourierTestServer
import CourierTestSupport
import Foundation
import Testing

/// Runs one planned terminal-callback conversation (``OnceConversation``) against its server and
/// checks every request's callbacks against the model.
struct OnceConversationRun: Sendable {
    typealias Knowledge = OnceConversation.Knowledge

    /// A started request: its id, or the task of an `async` caller.
    enum Handle: Sendable {
        case id(RequestID)
        case task(Task<Void, Never>)

        /// The id `start` returned; `nil` for an `async` request.
        var id: RequestID? {
            if case .id(let id) = self { return id }
            return nil
        }
    }

    /// An object only a request's closures hold: freed once the library lets go of them.
    final class Capture: Sendable {}

    /// The conversation to run.
    let plan: OnceConversation
    /// The server, with the paths of every conversation of the test.
    let server: OnceConversationServer
    /// The transport under test (a fresh instance for this conversation).
    let transport: TransportUnderTest
    /// The conversation, its plan and the seed, for failure messages.
    let context: String

    /// Starts every request, runs the actions in a random order (with `cancelAll` among them, if
    /// planned), opens the gates left closed, releases the connection or waits for every end, then
    /// checks each request.
    func run(random: inout SeededRandom, tally: inout TerminalCallbackConversationTests.Tally) async throws {
        for request in plan.requests { server.plan(request.path, request.behaviour) }
        var order = plan.requests.filter { if case .none = $0.action { false } else { true } }
        for index in order.indices.reversed() { order.swapAt(index, Int(random.next() % UInt64(index + 1))) }
        await withLeakCheck { leaks in
            leaks.watch(server.server)
            let ledger = leaks.track(OnceLedger())
            let weakConnection = WeakReference<HTTPConnection>()
            var connection: HTTPConnection? = leaks.track(HTTPConnection(baseURL: server.server.baseURL, configuration: configuration(leaks)))
            weakConnection.value = connection
            connection?.delegate = ledger
            ledger.expect(queue: connection!.callbackQueue)
            var cancels = [[Knowledge]](repeating: [], count: plan.requests.count)
            var handles: [Handle] = []
            for request in plan.requests {
                let handle = start(request, on: connection!, ledger: ledger, leaks: leaks)
                handles.append(handle)
                if case .cancelAtStart = request.action {
                    cancels[request.index].append(knowledge(request, handles[request.index], ledger))
                    cancel(handle, on: connection!)
                }
            }
            // An `async` request exists for `cancelAll` once its task has called `send`: wait
            // until the delegate has seen it (or it has ended, cancelled before `willSend`).
            #expect(await eventually { plan.requests.allSatisfy { $0.style != .async || ledger.hasSeen($0.index) || ledger.hasEnded($0.index, id: nil) } },
                    "an async request never started; \(context)")
            for (step, request) in order.enumerated() {
                if plan.cancelAllStep == step { cancelAll(connection!, handles, ledger, &cancels, &tally) }
                await perform(request, handles[request.index], connection!, ledger, &cancels, &tally)
            }
            if let step = plan.cancelAllStep, step >= order.count { cancelAll(connection!, handles, ledger, &cancels, &tally) }
            var silence = [Bool?](repeating: nil, count: plan.requests.count)  // true: must be silent; false: may be
            if plan.releases {
                // A request cancelled before has its terminal callback on its way: it must come.
                for request in plan.requests where cancels[request.index].isEmpty && !ledger.hasEnded(request.index, id: handles[request.index].id) {
                    silence[request.index] = knowledge(request, handles[request.index], ledger) == .beforeAnswer
                }
                connection = nil
                #expect(await eventually { weakConnection.value == nil }, "the connection outlived its last reference; \(context)")
                for request in plan.requests { server.open(request.path) }
                try? await Task.sleep(for: .milliseconds(150))  // a callback that should not come would land here
            } else {
                for request in plan.requests { server.open(request.path) }
                #expect(await eventually { plan.requests.allSatisfy { ledger.hasEnded($0.index, id: handles[$0.index].id) } },
                        "not every request ended; \(context)")
                try? await Task.sleep(for: .milliseconds(100))  // a late second terminal callback would land here
                #expect(connection?.activeRequestIDs.isEmpty == true, "requests still registered; \(context)")
                connection = nil
            }
            check(ledger, handles, cancels, silence, &tally)
            for case .task(let task) in handles { await task.value }
        }
        #expect(await eventually { server.server.connectionsOpen == 0 }, "the server still holds connections; \(context)")
    }

    /// The connection's configuration, with a fresh tracked transport (the native one allowing 32
    /// connections, so that held requests do not queue behind each other).
    private func configuration(_ leaks: LeakCheck) -> HTTPConnection.Configuration {
        let queue: DispatchQueue? = switch plan.queueKind {
        case 0: nil
        case 1: DispatchQueue(label: "once.callbacks")
        default: DispatchQueue(label: "once.callbacks.targeted", target: .global())
        }
        let kind: any Transport = transport == .native ? leaks.native(.init(maxConnectionsPerHost: 32)) : leaks.transport(.urlSession)
        let retryPolicy: RetryPolicy = plan.retries ? .exponentialBackoff(maxAttempts: 2, base: .milliseconds(2), cap: .milliseconds(8)) : .never
        var configuration = HTTPConnection.Configuration(timeout: plan.connectionTimeout, retryPolicy: retryPolicy, callbackQueue: queue,
                                                         transport: kind, cache: nil)
        configuration.awaitedRequestPlacement = plan.ownTask ? .ownTask : .callersTask
        return configuration
    }

    /// Starts `request` in its style; the closures record into `ledger` and hold a tracked capture.
    private func start(_ request: OnceConversation.Request, on connection: HTTPConnection, ledger: OnceLedger, leaks: LeakCheck) -> Handle {
        let index = request.index
        let body = OnceConversationServer.body(for: request.path)
        let capture = leaks.track(Capture())
        switch request.style {
        case .async:
            return .task(Task {
                let result: Result<HTTPResponse, HTTPConnectionError>
                do throws(HTTPConnectionError) { result = .success(try await connection.send(request.request)) } catch { result = .failure(error) }
                ledger.userEnded(index, OnceLedger.Ending(result, expectedBody: body), onQueue: false)
            })
        case .completion:
            return .id(connection.start(request.request, completion: { result in
                withExtendedLifetime(capture) { ledger.userEnded(index, OnceLedger.Ending(result, expectedBody: body), onQueue: true) }
            }))
        case .closures:
            return .id(connection.start(request.request, onDidStart: { _ in
                withExtendedLifetime(capture) { ledger.userStarted(index) }
            }, onSuccess: { response in
                ledger.userEnded(index, OnceLedger.Ending(.success(response), expectedBody: body), onQueue: true)
            }, onError: { error in
                ledger.userEnded(index, OnceLedger.Ending(.failure(error), expectedBody: body), onQueue: true)
            }))
        case .delegate:
            return .id(connection.start(request.request))
        }
    }

    /// Cancels a request the way its user would: by id, or by cancelling the `async` caller's task.
    private func cancel(_ handle: Handle, on connection: HTTPConnection) {
        switch handle {
        case .id(let id): connection.cancel(id)
        case .task(let task): task.cancel()
        }
    }

    /// What the test knows of `request` now: ended, unanswerable (its gate closed, or a stall no
    /// timeout will end), or possibly on its way.
    private func knowledge(_ request: OnceConversation.Request, _ handle: Handle, _ ledger: OnceLedger) -> Knowledge {
        if ledger.hasEnded(request.index, id: handle.id) { return .ended }
        switch (request.behaviour, request.action) {
        case (.gated, _) where !server.isOpen(request.path): return .beforeAnswer
        case (.stall, .expire): return .racing
        case (.stall, _): return .beforeAnswer
        default: return .racing
        }
    }

    /// Calls `cancelAll`, noting first what the test knew of each request.
    private func cancelAll(_ connection: HTTPConnection, _ handles: [Handle], _ ledger: OnceLedger, _ cancels: inout [[Knowledge]],
                           _ tally: inout TerminalCallbackConversationTests.Tally) {
        for request in plan.requests { cancels[request.index].append(knowledge(request, handles[request.index], ledger)) }
        connection.cancelAll()
        tally.cancelAlls += 1
    }

    /// Runs `request`'s action at its moment, noting what the test knew when it cancelled.
    private func perform(_ request: OnceConversation.Request, _ handle: Handle, _ connection: HTTPConnection, _ ledger: OnceLedger,
                         _ cancels: inout [[Knowledge]], _ tally: inout TerminalCallbackConversationTests.Tally) async {
        let ended = { ledger.hasEnded(request.index, id: handle.id) }
        switch request.action {
        case .none, .cancelAtStart, .expire, .deadlineMidBody:
            return
        case .cancelWhileHeld:
            _ = await eventually(timeout: .milliseconds(300)) { server.attempts(request.path) >= 1 || ended() }
        case .cancelRacingAnswer(let permille):
            // The cancel runs on the server's loop, its share of the client's time after the answer went out.
            let known = Locked<Knowledge?>(nil)
            let delay = tally.clientTime * permille / 1000
            ledger.holdHead(of: request.index)
            // (Weakly: a hook whose answer never goes out stays with the server.)
            server.whenSent(request.path) { [self, weak connection] in
                let start = ContinuousClock.now
                while ContinuousClock.now - start < delay {}
                guard let connection else { return }
                known.withLock { $0 = knowledge(request, handle, ledger) }
                cancel(handle, on: connection)
            }
            server.open(request.path)
            let answered = await eventually(timeout: .seconds(5)) { known.withLock { $0 } != nil || ended() }
            server.forgetHook(request.path)
            if answered, let knowledge = known.withLock({ $0 }) {
                cancels[request.index].append(knowledge)
                return
            }
        case .cancelAfterEnd:
            // Measures the client's time from the answer in the socket to its terminal callback.
            let sent = Locked<ContinuousClock.Instant?>(nil)
            server.whenSent(request.path) { sent.withLock { $0 = .now } }
            server.open(request.path)
            _ = await eventually(timeout: .seconds(5), ended)
            server.forgetHook(request.path)
            if let sentAt = sent.withLock({ $0 }), let endedAt = ledger.endedAt(request.index, id: handle.id) {
                tally.measured(endedAt - sentAt)
            }
        case .cancelAfter(let milliseconds):
            try? await Task.sleep(for: .milliseconds(milliseconds))
        }
        cancels[request.index].append(knowledge(request, handle, ledger))
        cancel(handle, on: connection)
    }
}
