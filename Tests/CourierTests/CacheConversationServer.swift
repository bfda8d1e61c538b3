@testable import Courier
import Foundation
import Synchronization

/// A clock for a cache conversation that moves only when the conversation moves it, in whole
/// seconds from a whole second, so that a `Date` header (which has second precision) names
/// exactly the moment its response arrived.
final class ConversationClock: Sendable {
    private let current = Mutex(Date(timeIntervalSince1970: 1_700_000_000))

    var now: Date { current.withLock { $0 } }

    func advance(by seconds: Int) {
        current.withLock { $0 += TimeInterval(seconds) }
    }
}

/// An origin server in memory, as a ``Transport``: it answers each request with the answer the
/// conversation planned, names the answer with a tag of its own (`X-Tag` and the body; a `304`
/// carries its tag in `X-Revalidation`), sets `Date` from the conversation's clock, and logs
/// every exchange, so the conversation knows whether it was asked and who got which answer.
final class TaggingServer: Transport {
    /// What the server answers to the next request.
    struct Plan: Sendable {
        var status = 200
        /// The answer's fields besides `X-Tag` and `Date`, which the server adds.
        var headers: HTTPHeaders = [:]
        /// The fields of the `304 Not Modified` sent instead when the request is conditional;
        /// `nil`: the full answer even then.
        var notModified: HTTPHeaders?
    }

    /// One request as the server received it, and its answer.
    struct Exchange: Sendable {
        let tag: String
        let request: TransportRequest
        let response: HTTPResponse

        var isConditional: Bool {
            request.headers.contains("If-None-Match") || request.headers.contains("If-Modified-Since")
        }
    }

    private struct State {
        var plan = Plan()
        var log: [Exchange] = []
    }

    private let state = Mutex(State())
    private let clock: ConversationClock

    init(clock: ConversationClock) {
        self.clock = clock
    }

    /// The answer to the next requests.
    var plan: Plan {
        get { state.withLock { $0.plan } }
        set { state.withLock { $0.plan = newValue } }
    }

    /// Every exchange so far, oldest first.
    var log: [Exchange] { state.withLock { $0.log } }

    func send(_ request: TransportRequest, observer: any TransportObserver) async throws(HTTPConnectionError) -> HTTPResponse {
        let date = HTTPDate.format(clock.now)
        let response = state.withLock { state in
            let tag = "t\(state.log.count + 1)"
            let conditional = request.headers.contains("If-None-Match") || request.headers.contains("If-Modified-Since")
            var headers: HTTPHeaders
            var status = 304
            var body = Data()
            if conditional, let notModified = state.plan.notModified {
                headers = notModified
                headers.set(tag, for: "X-Revalidation")
            } else {
                status = state.plan.status
                headers = state.plan.headers
                headers.set(tag, for: "X-Tag")
                if request.method != .head, status != 204 {
                    body = Data("\(tag): \(request.method.rawValue) \(request.url.absoluteString)".utf8)
                }
            }
            headers.set(date, for: "Date")
            let response = HTTPResponse(status: .init(code: status), headers: headers, body: body, url: request.url)
            state.log.append(Exchange(tag: tag, request: request, response: response))
            return response
        }
        observer.transportDidReceiveHead(.init(status: response.status, headers: response.headers, url: response.url))
        return response
    }
}
