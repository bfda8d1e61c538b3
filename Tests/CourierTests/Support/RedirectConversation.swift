import Courier
import CourierTestServer
import Foundation

/// The plans of ``RedirectConversationTests``: the origins, what each request sends, and the
/// per-request script of answers the servers play (``RedirectConversationServer``).
///
/// A request of id `n` starts at step 0 of its script: `/rc/<n>/0/x` on its first origin. Each
/// step is answered as its ``Answer`` says, whichever origin serves it; a `Location` names the
/// next step by its path (`/rc/<n>/<step>/x`) or by the query (`?s=<step>`, which wins over the
/// path). The model (``RedirectConversationModel``) predicts, from the same script, every hop
/// Courier makes and how the request ends.
enum RedirectConversation {
    /// The origins a conversation's requests reach.
    enum Origin: Int, CaseIterable, Sendable, CustomStringConvertible {
        /// The connection's base URL: `http://127.0.0.1:<first server>`.
        case base
        /// The same server by name, another origin: `http://localhost:<first server>`.
        case baseByName
        /// A second server: `http://127.0.0.1:<second server>`.
        case other
        /// A TLS server: `https://127.0.0.1:<its port>` (native transport only).
        case secure

        var isSecure: Bool { self == .secure }

        var description: String {
            switch self {
            case .base: "base"
            case .baseByName: "localhost"
            case .other: "other"
            case .secure: "https"
            }
        }
    }

    /// How a `Location` names its target.
    enum Form: CaseIterable, Sendable, CustomStringConvertible {
        /// `http://127.0.0.1:1234/rc/7/2/x`.
        case absolute
        /// As ``absolute``, with the scheme and host in capitals (`HTTP://LOCALHOST:1234/…`): the same URL.
        case shouting
        /// `/rc/7/2/x` (same origin only).
        case absolutePath
        /// `../2/x` (same origin only).
        case dotDot
        /// `?s=2`: the same path, another query (same origin only).
        case query
        /// `//127.0.0.1:1234/rc/7/2/x`: the current scheme (same scheme only).
        case schemeRelative

        /// The forms that can name a target on `target` from a page on `current`.
        static func usable(from current: Origin, to target: Origin) -> [Form] {
            if current == target { return allCases }
            if current.isSecure == target.isSecure { return [.absolute, .shouting, .schemeRelative] }
            return [.absolute, .shouting]
        }

        var description: String {
            switch self {
            case .absolute: "absolute"
            case .shouting: "ABSOLUTE"
            case .absolutePath: "/path"
            case .dotDot: "../"
            case .query: "?query"
            case .schemeRelative: "//scheme-relative"
            }
        }
    }

    /// Where a request is sent: an origin and the step its path and its query name.
    struct Place: Hashable, Sendable, CustomStringConvertible {
        let origin: Origin
        let pathStep: Int
        let queryStep: Int?

        /// The step the server plays for this place.
        var step: Int { queryStep ?? pathStep }

        /// The path the server sees.
        func path(id: Int) -> String { "/rc/\(id)/\(pathStep)/x" }

        var description: String { "\(origin)/\(pathStep)\(queryStep.map { "?s=\($0)" } ?? "")" }
    }

    /// How the server answers one step.
    enum Answer: Sendable, CustomStringConvertible {
        /// 200 with a JSON echo of the step and method; after `delay`, when set.
        case ok(delay: Duration?)
        /// A redirect to `step` on `origin`, named the `form` way, with a fragment when set.
        case redirect(status: Int, step: Int, origin: Origin, form: Form, fragment: String?)
        /// A redirect status without `Location`.
        case noLocation(status: Int)
        /// A redirect status whose `Location` is not an http(s) URL with a host.
        case unusable(status: Int, location: String)

        var description: String {
            switch self {
            case .ok(let delay): delay.map { "200 after \($0)" } ?? "200"
            case .redirect(let status, let step, let origin, let form, let fragment):
                "\(status) → \(origin)/\(step) (\(form)\(fragment.map { " #\($0)" } ?? ""))"
            case .noLocation(let status): "\(status) without Location"
            case .unusable(let status, let location): "\(status) Location: \(location)"
            }
        }
    }

    /// What a request sends as its body.
    enum BodyKind: Sendable, CustomStringConvertible {
        case none
        case data(Data)
        /// These bytes, from a file.
        case file(Data)
        /// These bytes, from an asynchronous sequence (read once), with its length or chunked.
        case stream(Data, lengthKnown: Bool)

        /// The bytes sent.
        var bytes: Data {
            switch self {
            case .none: Data()
            case .data(let data), .file(let data), .stream(let data, _): data
            }
        }

        var isNone: Bool {
            if case .none = self { return true }
            return false
        }

        var isStream: Bool {
            if case .stream = self { return true }
            return false
        }

        var description: String {
            switch self {
            case .none: "no body"
            case .data(let data): "\(data.count) B of data"
            case .file(let data): "a \(data.count) B file"
            case .stream(let data, let known): "a \(data.count) B stream\(known ? "" : ", chunked")"
            }
        }
    }

    /// A request's redirect policy, as the model knows it.
    enum Policy: Sendable, CustomStringConvertible {
        /// No policy on the request: the connection's, ``RedirectPolicy/follow``.
        case connectionDefault
        case follow(limit: Int)
        case doNotFollow
        /// Follows https → http hops.
        case downgrade
        /// A hook that stops at the hop of this count (and follows the others).
        case stopAt(Int)
        /// A hook that refuses the hop of this count (and follows the others).
        case refuseAt(Int)
        /// A hook that follows every hop with `X-Hooked: <count>` added.
        case tag
        /// ``RedirectPolicy/sameOriginOnly``.
        case sameOriginOnly

        /// The most redirects followed.
        var limit: Int {
            switch self {
            case .follow(let limit): limit
            case .doNotFollow: 0
            default: 10
            }
        }

        var description: String {
            switch self {
            case .connectionDefault: "connection's default"
            case .follow(let limit): "follow(limit: \(limit))"
            case .doNotFollow: "doNotFollow"
            case .downgrade: "follow, https → http allowed"
            case .stopAt(let count): "hook stops hop \(count)"
            case .refuseAt(let count): "hook refuses hop \(count)"
            case .tag: "hook tags each hop"
            case .sameOriginOnly: "sameOriginOnly"
            }
        }
    }

    /// One request of a conversation.
    struct Call: Sendable, CustomStringConvertible {
        let id: Int
        let start: Origin
        let method: HTTPRequest.Method
        let body: BodyKind
        /// Whether it sends `Authorization`, `Cookie` and `X-Api-Key` (values naming its id).
        let credentials: Bool
        let policy: Policy
        /// Its deadline, and whether it must meet it (a slow answer at the end outlasts it).
        var deadline: (Duration, mustFire: Bool)?
        var answers: [Answer]

        var description: String {
            "request \(id): \(method) from \(start), \(body), \(credentials ? "credentials" : "no credentials"), \(policy)\(deadline.map { ", deadline \($0.0)" } ?? ""); script \(answers.enumerated().map { "\($0.offset): \($0.element)" })"
        }
    }

    /// The credential fields a request with ``Call/credentials`` sends, and their values.
    static func credentialFields(id: Int) -> [(String, String)] {
        [("Authorization", "Bearer tok-\(id)"), ("Cookie", "c=\(id)"), ("X-Api-Key", "key-\(id)")]
    }

    /// The connection's default header: it goes to the base origin only.
    static let defaultHeader = (name: "X-Team", value: "courier")

    /// The redirect statuses.
    static let statuses = [301, 302, 303, 307, 308]
}
