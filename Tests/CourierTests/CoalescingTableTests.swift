@testable import Courier
import Foundation
import Testing

/// The coalescing table and its flights, without sockets: who leads, who waits, and the races
/// between landing, waiting and leaving.
@Suite("Coalescing table")
struct CoalescingTableTests {
    static let request = TransportRequest(method: .get, url: URL(string: "http://example.test/a")!)
    static let response = HTTPResponse(status: .init(code: 200), url: URL(string: "http://example.test/a")!)

    /// The key of `request` under the given policies (by default, exponential backoff and following redirects).
    static func key(_ request: TransportRequest, retry: RetryPolicy = .exponentialBackoff(),
                    redirect: RedirectPolicy = .follow) -> CoalescingKey? {
        CoalescingKey(request, retryPolicy: retry, redirectPolicy: redirect)
    }

    @Test("the first request for a key leads, the next ones follow with their own tickets, and after landing a new flight starts")
    func leadFollowLand() throws {
        let table = CoalescingTable()
        let key = try #require(Self.key(Self.request))
        guard case .lead(let flight) = table.join(key) else { Issue.record("the first did not lead"); return }
        guard case .follow(let same, let first) = table.join(key), case .follow(_, let second) = table.join(key) else {
            Issue.record("the next ones did not follow"); return
        }
        #expect(same === flight)
        #expect(first != second)
        table.land(flight, for: key, with: .success(Self.response))
        guard case .lead(let next) = table.join(key) else { Issue.record("no new flight after landing"); return }
        #expect(next !== flight)
    }

    @Test("a follower that comes to wait after the landing gets the outcome at once")
    func waitAfterLanding() async throws {
        let table = CoalescingTable()
        let key = try #require(Self.key(Self.request))
        guard case .lead(let flight) = table.join(key), case .follow(_, let ticket) = table.join(key) else { return }
        table.land(flight, for: key, with: .success(Self.response))
        #expect(try await flight.outcome(for: ticket).get().status.code == 200)
    }

    @Test("a follower cancelled before it waits gets cancelled at once; the flight's other followers are not affected")
    func cancelledBeforeWaiting() async throws {
        let table = CoalescingTable()
        let key = try #require(Self.key(Self.request))
        guard case .lead(let flight) = table.join(key), case .follow(_, let earlyTicket) = table.join(key),
              case .follow(_, let patient) = table.join(key) else { return }
        let cancelled = Task {
            withUnsafeCurrentTask { $0?.cancel() }
            return await flight.outcome(for: earlyTicket)
        }
        let waiting = Task { await flight.outcome(for: patient) }
        let early = await cancelled.value
        #expect(throws: HTTPConnectionError.cancelled) { try early.get() }
        try await Task.sleep(for: .milliseconds(20))
        table.land(flight, for: key, with: .success(Self.response))
        #expect(try await waiting.value.get().status.code == 200)
    }

    @Test("a follower cancelled while it waits leaves at once; the landing later resumes only the others")
    func cancelledWhileWaiting() async throws {
        let table = CoalescingTable()
        let key = try #require(Self.key(Self.request))
        guard case .lead(let flight) = table.join(key), case .follow(_, let leaving) = table.join(key),
              case .follow(_, let staying) = table.join(key) else { return }
        let leaver = Task { await flight.outcome(for: leaving) }
        let stayer = Task { await flight.outcome(for: staying) }
        try await Task.sleep(for: .milliseconds(20))
        leaver.cancel()
        let left = await leaver.value
        #expect(throws: HTTPConnectionError.cancelled) { try left.get() }
        table.land(flight, for: key, with: .failure(.timedOut))
        let stayed = await stayer.value
        #expect(throws: HTTPConnectionError.timedOut) { try stayed.get() }
    }

    @Test("only bodiless GET and HEAD requests have a key; header values and the body limit tell requests apart")
    func keys() {
        var post = Self.request
        post.method = .post
        #expect(Self.key(post) == nil)
        var withBody = Self.request
        withBody.body = Data("x".utf8)
        #expect(Self.key(withBody) == nil)
        var alice = Self.request
        alice.headers.set("alice", for: "X-API-Key")
        var bob = Self.request
        bob.headers.set("bob", for: "X-API-Key")
        #expect(Self.key(alice) != Self.key(bob))
        var limited = Self.request
        limited.maxResponseBodySize = 10
        #expect(Self.key(limited) != Self.key(Self.request))
        var head = Self.request
        head.method = .head
        #expect(Self.key(head) != Self.key(Self.request))
    }

    @Test("the timeout and the retry and redirect policies tell requests apart; a policy that decides with a closure gives no key")
    func settingsInTheKey() {
        var patient = Self.request
        patient.timeout = .seconds(90)
        #expect(Self.key(patient) != Self.key(Self.request))
        #expect(Self.key(Self.request, retry: .never) != Self.key(Self.request))
        #expect(Self.key(Self.request, retry: .exponentialBackoff(maxAttempts: 5)) != Self.key(Self.request))
        #expect(Self.key(Self.request, retry: .exponentialBackoff(maxAttempts: 3)) == Self.key(Self.request))
        #expect(Self.key(Self.request, retry: .exponentialBackoff(maxAttempts: 1)) == Self.key(Self.request, retry: .never))
        #expect(Self.key(Self.request, retry: .exponentialBackoff().allowingNonIdempotentMethods()) == Self.key(Self.request))
        #expect(Self.key(Self.request, redirect: .doNotFollow) != Self.key(Self.request))
        #expect(Self.key(Self.request, retry: .custom { _ in .doNotRetry }) == nil)
        #expect(Self.key(Self.request, redirect: .sameOriginOnly) == nil)
    }
}
