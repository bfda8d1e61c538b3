import Courier
import Foundation

/// The documented redirect rules (README "Retries, redirects, deadlines and metrics",
/// "Credentials never cross origins", ``RedirectPolicy``), written out independently of Courier:
/// from a ``RedirectConversation/Call`` and its script, every request the servers must see, every
/// hop the policy's hook must be asked about, and how the request ends.
///
/// The rules, in the order they apply to each redirect answer:
/// - a policy whose limit is 0 (``RedirectPolicy/doNotFollow``), or an answer without
///   `Location`, delivers the redirect as the response;
/// - past the limit: ``HTTPConnectionError/tooManyRedirects``;
/// - a `Location` that is no http(s) URL with a host, or an https → http hop the policy does not
///   allow: ``HTTPConnectionError/redirectRefused``;
/// - the hop is rewritten: 303 turns every method but HEAD into a GET without a body, 301 and
///   302 turn POST into one, 307 and 308 keep method and body; a hop to another origin (scheme,
///   host, port; case does not matter) drops the credentials and the default header, which no
///   later hop adds back;
/// - the hook sees the rewritten hop and may stop (the redirect is the response), refuse
///   (``HTTPConnectionError/redirectRefused``) or change it;
/// - a hop that must resend a stream fails with ``HTTPConnectionError/bodyNotReplayable``; a hop
///   to a request already made (same method and URL; a fragment is not part of a request) with
///   ``HTTPConnectionError/redirectCycle``.
enum RedirectConversationModel {
    typealias Place = RedirectConversation.Place

    /// One request a server saw (or must see), as the test compares them.
    struct Visit: Equatable, Sendable, CustomStringConvertible {
        let place: Place
        let method: String
        let body: Data
        /// Whether `Content-Type` was sent.
        let contentType: Bool
        /// The credential fields sent (names, in ``RedirectConversation/credentialFields(id:)``'s order).
        let credentials: [String]
        /// Whether the connection's default header was sent.
        let defaultHeader: Bool
        /// The `X-Hooked` value, when sent.
        let hooked: String?
        /// Whether the request's own `X-Custom` field arrived.
        let custom: Bool

        var description: String {
            "\(method) \(place) body \(body.count) B\(contentType ? " typed" : "")\(credentials.isEmpty ? "" : " \(credentials)")\(defaultHeader ? " team" : "")\(hooked.map { " hooked \($0)" } ?? "")\(custom ? "" : " NO X-Custom")"
        }
    }

    /// One question the hook must be asked.
    struct HookCall: Equatable, Sendable, CustomStringConvertible {
        let count: Int
        let crossesOrigin: Bool
        let method: String
        /// Whether the rewritten hop still carries `Authorization`.
        let authorization: Bool

        var description: String { "#\(count)\(crossesOrigin ? " cross" : "") \(method)\(authorization ? " auth" : "")" }
    }

    /// How a request ends.
    enum Ending: Equatable, Sendable, CustomStringConvertible {
        /// The 200 of this place.
        case answered(Place)
        /// The redirect answer itself, with this status.
        case delivered(Int)
        /// This error, carrying the redirect answer with this status.
        case failed(HTTPConnectionError, status: Int)

        var description: String {
            switch self {
            case .answered(let place): "200 at \(place)"
            case .delivered(let status): "its \(status)"
            case .failed(let error, let status): "\(error.kindName) after a \(status)"
            }
        }
    }

    /// What the model predicts for one request.
    struct Prediction: Sendable {
        var visits: [Visit] = []
        var hookCalls: [HookCall] = []
        var ending = Ending.delivered(0)
        /// The redirects followed.
        var redirects = 0
    }

    /// The state of a request between hops.
    private struct Hop {
        var place: Place
        var method: HTTPRequest.Method
        var body: RedirectConversation.BodyKind
        var credentials: Bool
        var defaultHeader: Bool
        var hooked: String?

        func visit() -> Visit {
            Visit(place: place, method: method.rawValue, body: body.bytes, contentType: !body.isNone,
                  credentials: credentials ? RedirectConversation.credentialFields(id: 0).map(\.0) : [],
                  defaultHeader: defaultHeader, hooked: hooked, custom: true)
        }
    }

    /// Predicts the requests the servers see for `call` and how it ends.
    static func predict(_ call: RedirectConversation.Call) -> Prediction {
        let policy = call.policy
        var hop = Hop(place: Place(origin: call.start, pathStep: 0, queryStep: nil), method: call.method, body: call.body,
                      credentials: call.credentials, defaultHeader: call.start == .base, hooked: nil)
        var made: Set<String> = [key(hop)]
        var prediction = Prediction()
        // Each turn follows a redirect or ends the request, and the limit ends it at last.
        for _ in 0...policy.limit {
            prediction.visits.append(hop.visit())
            let status: Int
            let next: Place
            switch call.answers[hop.place.step] {
            case .ok:
                prediction.ending = .answered(hop.place)
                return prediction
            case .noLocation(let code):
                prediction.ending = .delivered(code)
                return prediction
            case .unusable(let code, _):
                prediction.ending = policy.limit == 0 ? .delivered(code)
                    : .failed(prediction.redirects >= policy.limit ? .tooManyRedirects : .redirectRefused, status: code)
                return prediction
            case .redirect(let code, let step, let origin, let form, _):
                status = code
                next = switch form {
                case .absolute, .shouting, .schemeRelative: Place(origin: origin, pathStep: step, queryStep: nil)
                case .absolutePath, .dotDot: Place(origin: hop.place.origin, pathStep: step, queryStep: nil)
                case .query: Place(origin: hop.place.origin, pathStep: hop.place.pathStep, queryStep: step)
                }
            }
            if policy.limit == 0 {
                prediction.ending = .delivered(status)
                return prediction
            }
            if prediction.redirects >= policy.limit {
                prediction.ending = .failed(.tooManyRedirects, status: status)
                return prediction
            }
            let downgrade = if case .downgrade = policy { true } else { false }
            if hop.place.origin.isSecure, !next.origin.isSecure, !downgrade {
                prediction.ending = .failed(.redirectRefused, status: status)
                return prediction
            }
            let crosses = next.origin != hop.place.origin
            hop.place = next
            if status == 303 && hop.method != .head || (status == 301 || status == 302) && hop.method == .post {
                hop.method = .get
                hop.body = .none
            }
            if crosses {
                hop.credentials = false
                hop.defaultHeader = false
            }
            let count = prediction.redirects
            switch policy {
            case .stopAt, .refuseAt, .tag:
                prediction.hookCalls.append(HookCall(count: count, crossesOrigin: crosses, method: hop.method.rawValue,
                                                     authorization: hop.credentials))
            default: break
            }
            switch policy {
            case .stopAt(count):
                prediction.ending = .delivered(status)
                return prediction
            case .sameOriginOnly where crosses:
                prediction.ending = .delivered(status)
                return prediction
            case .refuseAt(count):
                prediction.ending = .failed(.redirectRefused, status: status)
                return prediction
            case .tag:
                hop.hooked = "\(count)"
            default: break
            }
            if hop.body.isStream {
                prediction.ending = .failed(.bodyNotReplayable, status: status)
                return prediction
            }
            guard made.insert(key(hop)).inserted else {
                prediction.ending = .failed(.redirectCycle, status: status)
                return prediction
            }
            prediction.redirects += 1
        }
        fatalError("the model went round more often than its script allows: \(call)")
    }

    /// What makes two requests the same request: method and place.
    private static func key(_ hop: Hop) -> String {
        "\(hop.method.rawValue) \(hop.place)"
    }
}
