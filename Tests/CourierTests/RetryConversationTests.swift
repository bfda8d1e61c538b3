import Courier
import CourierTestServer
import Foundation
import Testing

/// Retry policies, deadlines and cancels together, over real sockets: conversations of concurrent
/// GETs, PUTs, DELETEs and POSTs, each under a policy of its own (never, exponential backoff with
/// 1 to 4 attempts, or that and non-idempotent methods), some with a deadline, against a server
/// that answers each attempt as planned: 200, a retryable status (with or without `Retry-After`,
/// one within the policy's cap and one past it), a status that is not retryable, a slow 200, or,
/// on the native transport, a connection closed before any answer.
///
/// A model of ``RetryPolicy``'s documented rules (``expected(_:method:policy:)``) predicts, for
/// each request, how many attempts reach the server and how the request ends. Each request must
/// end so, once, with exactly that many attempts; one with a deadline may instead end with
/// `deadlineExceeded` after no more attempts (and must, when its slow answers alone outlast the
/// deadline), and one the test cancelled with `cancelled`.
@Suite("Retries: random conversations")
struct RetryConversationTests {
    /// How the server answers one attempt.
    enum Answer: Sendable, CustomStringConvertible {
        case ok
        case slow(milliseconds: Int)
        case status(Int, retryAfter: String?)
        /// The connection closes once the request is read, with no answer.
        case drop

        var description: String {
            switch self {
            case .ok: "200"
            case .slow(let milliseconds): "200 after \(milliseconds) ms"
            case .status(let code, let retryAfter): "\(code)\(retryAfter.map { " Retry-After: \($0)" } ?? "")"
            case .drop: "drop"
            }
        }
    }

    /// A request's retry policy, as the model knows it.
    struct Policy: Sendable, CustomStringConvertible {
        /// `nil`: ``RetryPolicy/never``.
        var maxAttempts: Int?
        var nonIdempotent = false

        /// Backoffs of at most 8 ms, and a `Retry-After` cap of 8 ms.
        var retryPolicy: RetryPolicy {
            guard let maxAttempts else { return .never }
            let policy = RetryPolicy.exponentialBackoff(maxAttempts: maxAttempts, base: .milliseconds(2), cap: .milliseconds(8))
            return nonIdempotent ? policy.allowingNonIdempotentMethods() : policy
        }

        var description: String {
            maxAttempts.map { "backoff ×\($0)\(nonIdempotent ? " incl. POST" : "")" } ?? "never"
        }
    }

    /// How the model says a request ends.
    enum Ending: Equatable, CustomStringConvertible {
        case answered
        case status(Int)
        case failed(HTTPConnectionError)

        var description: String {
            switch self {
            case .answered: "200"
            case .status(let code): "its \(code)"
            case .failed(let error): error.kindName
            }
        }
    }

    /// The attempts that reach the server, and the ending, by the documented rules: a retryable
    /// status (408, 429, 500, 502, 503, 504) or a connection lost before an answer is retried
    /// while attempts remain, for idempotent methods or a policy that allows the others; a
    /// `Retry-After` past the policy's cap ends the retries with that response.
    static func expected(_ plan: [Answer], method: HTTPRequest.Method, policy: Policy) -> (attempts: Int, ending: Ending) {
        let mayRetry = policy.maxAttempts != nil && (policy.nonIdempotent || method != .post)
        for attempt in 1... {
            let answer = attempt <= plan.count ? plan[attempt - 1] : .ok
            let canRetry = mayRetry && attempt < (policy.maxAttempts ?? 1)
            switch answer {
            case .ok, .slow:
                return (attempt, .answered)
            case .status(let code, let retryAfter):
                let waitsTooLong = retryAfter.flatMap(Int.init).map { $0 > 0 } ?? false  // any whole second is past the cap
                if !(canRetry && RetryAttempt.retryableStatuses.contains(code) && !waitsTooLong) { return (attempt, .status(code)) }
            case .drop:
                if !canRetry { return (attempt, .failed(.connectionLost)) }
            }
        }
        fatalError("unreachable")
    }

    @Test("20 conversations of 12 requests under random policies and deadlines: each request makes the attempts the rules predict and ends as they say, or at its deadline or cancel, once",
          arguments: TransportUnderTest.allCases)
    func randomConversations(_ transport: TransportUnderTest) async throws {
        let seed = SeededRandom.seed(default: 0x5EED_0005_0301)
        let server = try TestServer()
        defer { server.shutdown() }
        let plans = Locked<[String: [Answer]]>([:])
        let visits = Locked<[String: Int]>([:])
        server.route("/retry/*") { request in
            let attempt = visits.withLock { visits -> Int in
                visits[request.path, default: 0] += 1
                return visits[request.path]!
            }
            let plan = plans.withLock { $0[request.path] ?? [] }
            // Every answer closes its connection, so a dropped attempt is never on a reused one (the
            // native transport sends a GET once more on its own when a reused connection drops it).
            let close = [("Connection", "close")]
            let body = Data("{\"path\":\"\(request.path)\"}".utf8)
            switch attempt <= plan.count ? plan[attempt - 1] : .ok {
            case .ok: return .response(status: 200, headers: close, body: body)
            case .slow(let milliseconds): return .delayed(.milliseconds(milliseconds), .response(status: 200, headers: close, body: body))
            case .status(let code, let retryAfter): return .response(status: code, headers: close + (retryAfter.map { [("Retry-After", $0)] } ?? []))
            case .drop: return .script([.close])
            }
        }
        var met = (retried: 0, pastCap: 0, deadlines: 0, forced: 0, cancelled: 0, dropped: 0)
        for conversation in 0..<20 {
            var random = SeededRandom(seed: seed, stream: conversation)
            let context = "conversation \(conversation), \(SeededRandom(seed: seed).replayHint)"
            var requests: [HTTPRequest] = []
            var cases: [(path: String, method: HTTPRequest.Method, policy: Policy, plan: [Answer], deadline: Duration?)] = []
            for index in 0..<12 {
                let path = "/retry/c\(conversation)-r\(index)"
                let method: HTTPRequest.Method = [.get, .get, .put, .delete, .post, .post][Int(random.next() % 6)]
                let policy = Policy(maxAttempts: random.next() % 4 == 0 ? nil : 1 + Int(random.next() % 4), nonIdempotent: random.next() % 3 == 0)
                var plan = (0..<Int(random.next() % 5)).map { _ in Self.draw(&random, drops: transport == .native) }
                var deadline: Duration? = random.next() % 4 == 0 ? .milliseconds(10 + Int(random.next() % 40)) : nil
                if index == 1 { plan = [.slow(milliseconds: 300)] }
                if index == 0 {  // one request a conversation whose answer outlasts its deadline by far
                    plan = [.slow(milliseconds: 300)]
                    deadline = .milliseconds(20)
                }
                var request = HTTPRequest(method, path, body: method == .get || method == .delete ? .none : .data(Data(path.utf8)))
                request.retryPolicy = policy.retryPolicy
                request.deadline = deadline
                requests.append(request)
                cases.append((path, method, policy, plan, deadline))
            }
            plans.withLock { for item in cases { $0[item.path] = item.plan } }
            // Request 1 is always cancelled, while its slow answer is on its way.
            let cancelled = Set((0..<12).filter { random.next() % 10 == 0 || $0 == 1 })
            let cancelAfter = Duration.milliseconds(Int(random.next() % 20))
            let outcomes = try await runCase(transport, on: server, requests, during: { caseContext, ids in
                try await Task.sleep(for: cancelAfter)
                for index in cancelled { caseContext.connection.cancel(ids[index]) }
            })
            for (index, outcome) in outcomes.enumerated() {
                let item = cases[index]
                let (attempts, ending) = Self.expected(item.plan, method: item.method, policy: item.policy)
                let seen = visits.withLock { $0[item.path] ?? 0 }
                let history = "\(item.method) \(item.path) under \(item.policy), plan \(item.plan), deadline \(item.deadline.map { "\($0)" } ?? "none"): expected \(attempts) attempts and \(ending), the server saw \(seen), the client got \(outcome.result); \(context)"
                if attempts > 1, seen > 1 { met.retried += 1 }
                if item.plan.prefix(attempts).contains(where: { if case .drop = $0 { true } else { false } }) { met.dropped += 1 }
                if case .status(_, "1") = item.plan.prefix(attempts).last { met.pastCap += 1 }
                if cancelled.contains(index), outcome.error == .cancelled {
                    met.cancelled += 1
                    #expect(seen <= attempts, "\(history)")
                    continue
                }
                // The slow answers alone outlast the deadline: the request cannot end another way.
                let slowest = item.plan.prefix(attempts).reduce(Duration.zero) { total, answer in
                    if case .slow(let milliseconds) = answer { total + .milliseconds(milliseconds) } else { total }
                }
                // (By 50 ms at least: the deadline's timer must beat the answer on a loaded machine.)
                if let deadline = item.deadline, slowest > deadline + .milliseconds(50) {
                    met.forced += 1
                    #expect(outcome.error == .deadlineExceeded, "the deadline passed during a slow answer: \(history)")
                }
                if item.deadline != nil, outcome.error == .deadlineExceeded {
                    met.deadlines += 1
                    #expect(seen <= attempts, "\(history)")
                    continue
                }
                #expect(seen == attempts, "\(history)")
                switch ending {
                case .answered:
                    let path = (try? outcome.response?.decode([String: String].self))?["path"]
                    #expect(path == item.path, "\(history)")
                case .status(let code):
                    #expect(outcome.error == .unacceptableStatus && outcome.status == code, "\(history)")
                case .failed(let error):
                    #expect(outcome.error == error, "\(history)")
                }
            }
        }
        #expect(met.retried > 0 && met.pastCap > 0 && met.deadlines > 0 && met.forced > 0 && met.cancelled > 0 && (met.dropped > 0 || transport != .native),
                "the conversations missed a situation: \(met)")
    }

    /// One planned answer: mostly retryable statuses and 200s, some that end a request.
    static func draw(_ random: inout SeededRandom, drops: Bool) -> Answer {
        switch random.next() % 20 {
        case 0..<4: .ok
        case 4..<6: .slow(milliseconds: 1 + Int(random.next() % 40))
        case 6..<10: .status([503, 500, 502, 504, 408][Int(random.next() % 5)], retryAfter: nil)
        case 10..<12: .status(429, retryAfter: "0")
        case 12..<13: .status(503, retryAfter: "1")
        case 13..<15: .status([404, 400, 409][Int(random.next() % 3)], retryAfter: nil)
        case 15..<16: .status(503, retryAfter: "Wed, 21 Oct 2015 07:28:00 GMT")
        default: drops ? .drop : .status(500, retryAfter: nil)
        }
    }
}
