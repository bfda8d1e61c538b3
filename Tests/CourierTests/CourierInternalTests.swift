@testable import Courier
import CourierTestServer
import Foundation
import Testing

/// Rules checked below the public API, where a real peer cannot produce the case.
@Suite("Internals")
struct CourierInternalTests {
    @Test("F4 an https → http redirect is refused by default and allowed on request")
    func downgradeRefused() async throws {
        let secure = URL(string: "https://api.example.com/start")!
        let request = TransportRequest(method: .get, url: secure)
        func context(_ policy: RedirectPolicy) -> RequestContext {
            var plan = RequestPlan(bypassing: request)
            plan = RequestPlan(copying: plan, redirectPolicy: policy)
            return RequestContext(id: RequestID.next(), plan: plan, observer: IgnoringTransportObserver(),
                                  events: SilentRequestEvents(), metrics: MetricsCollector(), deadline: nil)
        }
        // The next stage stands in for the server's answer: this is a policy decision, not network behaviour.
        let next = PipelineNext { request throws(HTTPConnectionError) in
            if request.url.scheme == "https" {
                return HTTPResponse(status: .init(code: 302), headers: ["Location": "http://api.example.com/plain"], url: request.url)
            }
            return HTTPResponse(status: .ok, url: request.url)
        }
        await #expect(throws: HTTPConnectionError.redirectRefused) {
            try await RedirectStage().send(request, context: context(.follow), next: next)
        }
        let allowed = try await RedirectStage().send(request, context: context(.follow(allowingInsecureDowngrade: true)), next: next)
        #expect(allowed.url.scheme == "http")
    }

    @Test("Retry-After parses delta-seconds and all three HTTP date forms")
    func retryAfterParsing() {
        let now = Date(timeIntervalSince1970: 784_111_777 - 60)  // a minute before Sun, 06 Nov 1994 08:49:37 GMT
        #expect(RetryAfter.delay("120", now: now) == .seconds(120))
        #expect(RetryAfter.delay("Sun, 06 Nov 1994 08:49:37 GMT", now: now) == .seconds(60))
        #expect(RetryAfter.delay("Sunday, 06-Nov-94 08:49:37 GMT", now: now) == .seconds(60))
        #expect(RetryAfter.delay("Sun Nov  6 08:49:37 1994", now: now) == .seconds(60))
        #expect(RetryAfter.delay("soon", now: now) == nil)
        #expect(RetryAfter.delay("-5", now: now) == nil)
        #expect(RetryAfter.delay(nil, now: now) == nil)
    }

    @Test("IMF-fixdate is read directly and agrees with DateFormatter across two centuries; malformed dates are refused")
    func fixdateParsing() {
        var generator = SeededRandom.forTest()
        for _ in 0..<2_000 {
            let date = Date(timeIntervalSince1970: TimeInterval(Int.random(in: -2_208_988_800...4_102_444_800, using: &generator)))
            let text = HTTPDate.format(date)
            #expect(HTTPDate.parseFixdate(Array(text.utf8)) == date, "\(text), \(generator.replayHint)")
        }
        #expect(HTTPDate.parseFixdate(Array("Thu, 29 Feb 2024 23:59:59 GMT".utf8)) == Date(timeIntervalSince1970: 1_709_251_199))
        for bad in ["Sun, 06 Nov 1994 08:49:37 UTC", "Sun, 06 Nxv 1994 08:49:37 GMT", "Sun, 6 Nov 1994 08:49:37 GMT",
                    "Sun, 06 Nov 1994 24:49:37 GMT", "Sun, 00 Nov 1994 08:49:37 GMT", "Sun, 06 Nov 19a4 08:49:37 GMT"] {
            #expect(HTTPDate.parseFixdate(Array(bad.utf8)) == nil, "\(bad)")
        }
    }

    @Test("URLs: relative targets join the base path with one slash")
    func urlResolution() throws {
        let base = URL(string: "https://h.example/api/")!
        #expect(try RequestPlan.url(for: HTTPRequest(.get, "/rooms"), baseURL: base).absoluteString == "https://h.example/api/rooms")
        #expect(try RequestPlan.url(for: HTTPRequest(.get, "rooms"), baseURL: URL(string: "https://h.example/api")!).absoluteString
                == "https://h.example/api/rooms")
        #expect(try RequestPlan.url(for: HTTPRequest(.get, ""), baseURL: base).absoluteString == "https://h.example/api/")
        #expect(throws: HTTPConnectionError.invalidURL) { try RequestPlan.url(for: HTTPRequest(.get, "ftp://x/y"), baseURL: nil) }
    }

    /// An authenticator whose `apply` is given as a closure.
    struct EditingAuthenticator: Authenticator {
        let edit: @Sendable (inout HTTPHeaders) -> Void
        func apply(_ credential: Credential, to request: inout TransportRequest) { edit(&request.headers) }
        func refresh(previous: Credential?, context: AuthenticationContext) async throws -> Credential { Credential(secret: "") }
    }

    @Test("an authenticator's fields count as credentials by name, whatever the name: added or changed, not left alone or set to the same value")
    func credentialFieldsRecorded() {
        func recorded(_ edit: @escaping @Sendable (inout HTTPHeaders) -> Void) -> Set<String> {
            var request = TransportRequest(method: .get, url: URL(string: "https://api.example.com/")!,
                                           headers: ["Accept": "application/json", "X-Multi": "a", "x-multi": "b", "X-Same": "1"])
            EditingAuthenticator(edit: edit).applyRecording(Credential(secret: "s"), to: &request)
            return request.credentialHeaderNames
        }
        #expect(recorded { _ in }.isEmpty)
        #expect(recorded { $0.set("1", for: "x-same") }.isEmpty)
        #expect(recorded { $0.set("k3y", for: "X-Api-Key") } == ["x-api-key"])
        #expect(recorded { $0.add("c", for: "X-MULTI") } == ["x-multi"])
        #expect(recorded { $0.set("b", for: "X-Multi") } == ["x-multi"], "one of two values gone")
        #expect(recorded { $0.set("Bearer t", for: "Authorization"); $0.set("2", for: "X-Same") } == ["authorization", "x-same"])
    }
}
