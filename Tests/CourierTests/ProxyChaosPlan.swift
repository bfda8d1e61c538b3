import Courier
import CourierTestServer

/// The random choices of one proxy chaos conversation, drawn before it runs, and what each
/// fault must end in: which proxy (kind, credentials), and per request its origin, what it sends
/// (a GET, a POST of data or of a file, a PUT), whether it reuses the last tunnel, meets a proxy
/// that closed its idle connections, a kept tunnel that goes stale just as it is reused (at the
/// proxy or at the origin), or a fault on a fresh connection, and whether the client cancels it.
///
/// Faults come from decks (``FaultDecks``) shared by all the conversations of a run, so that a
/// run deals every fault of a deck before any comes twice.
struct ProxyChaosPlan {
    /// The proxy the conversation goes through.
    let kind: Proxy.Kind
    /// Whether the proxy is given credentials (`Proxy-Authorization`, or RFC 1929).
    let withCredentials: Bool
    /// The requests, in the order they are sent.
    private(set) var requests: [Request] = []

    /// One request of the conversation.
    struct Request: CustomStringConvertible {
        /// `http://…` or `https://…`, by address or by name.
        let base: String
        /// What it sends.
        let verb: Verb
        /// Whether it meets a fault on a fresh connection, reuses the kept one, or follows the
        /// proxy closing its idle connections.
        let step: Step
        /// Whether and when the client cancels it.
        let cancel: Cancel

        /// The fault its connection meets (``ProxyChaosFault/behave`` on a kept or replaced one).
        var fault: ProxyChaosFault {
            if case .fault(let fault) = step { return fault }
            return .behave
        }

        /// The request as planned, for a failure's history.
        var description: String {
            "\(verb) \(base), \(step)\(cancel == .none ? "" : ", cancelled \(cancel)")"
        }
    }

    /// What a request sends.
    enum Verb: CustomStringConvertible {
        /// A GET without a body.
        case get
        /// A POST of a body held in memory.
        case postData
        /// A POST of a file.
        case postFile
        /// A PUT of a body held in memory.
        case put

        /// The request method.
        var method: HTTPRequest.Method {
            switch self {
            case .get: .get
            case .postData, .postFile: .post
            case .put: .put
            }
        }

        /// Whether the method may be repeated (GET, PUT): a stale connection sends it again.
        var isIdempotent: Bool { method.isIdempotent }

        /// The verb, for a failure's history.
        var description: String {
            switch self {
            case .get: "GET"
            case .postData: "POST of data"
            case .postFile: "POST of a file"
            case .put: "PUT"
            }
        }
    }

    /// Whether and when the client cancels a request.
    enum Cancel: Equatable {
        /// The request runs to its end.
        case none
        /// Once the proxy has stalled (a stalled forwarded request or response would otherwise
        /// wait for the 20 s request timeout).
        case atStall
        /// After this many milliseconds: the request may end either way.
        case atRandom(milliseconds: Int)
    }

    /// Conversation `number` of a run with `requestCount` requests to `bases`: the kinds and
    /// credentials go round in turn, everything else comes from `random` and `decks`.
    init(number: Int, requestCount: Int, bases: [String], _ random: inout SeededRandom, decks: inout FaultDecks) {
        kind = [Proxy.Kind.http, .https, .socks5, .socks5h][number % 4]
        withCredentials = number / 4 % 2 == 1
        for _ in 0..<requestCount {
            let base: String
            let step: Step
            if let last = requests.last, last.cancel == .none, expected(last) == .body, random.next() % 10 < 4 {
                base = last.base
                step = [Step.reuse, .afterIdleClose, .staleAtProxy, .staleAtOrigin][Int(random.next() % 4)]
            } else {
                base = bases[Int(random.next() % UInt64(bases.count))]
                step = .fault(random.next() % 10 < 2 ? .behave : decks.draw(faults(tunnels: tunnels(base)), deck: deck(tunnels: tunnels(base)), &random))
            }
            let verb = random.next() % 2 == 0 ? Verb.get : [Verb.postData, .postFile, .put][Int(random.next() % 3)]
            let fault = Request(base: base, verb: verb, step: step, cancel: .none).fault
            let cancel: Cancel
            if fault.stalls {
                // A stalled handshake is ended by the connect timeout, or half the time by a cancel.
                cancel = fault == .stallMidResponse || !tunnels(base) || random.next() % 2 == 0 ? .atStall : .none
            } else {
                cancel = random.next() % 10 == 0 ? .atRandom(milliseconds: Int(random.next() % 4)) : .none
            }
            requests.append(Request(base: base, verb: verb, step: step, cancel: cancel))
        }
    }

    /// What a request does besides its fault.
    enum Step: Equatable, CustomStringConvertible {
        /// A fresh connection through the proxy (every earlier one closed first) meets `fault`.
        case fault(ProxyChaosFault)
        /// Goes to the last request's origin on its idle tunnel: the proxy accepts nothing new.
        case reuse
        /// Goes to the last request's origin after the proxy closed its idle connections.
        case afterIdleClose
        /// Goes to the last request's origin on its idle tunnel, which the proxy closes when the
        /// request's bytes arrive, passing none of them on.
        case staleAtProxy
        /// Goes to the last request's origin on its idle tunnel; the origin reads the whole
        /// request, then closes its connection unanswered (and so the proxy closes the tunnel).
        case staleAtOrigin

        /// The step, for a failure's history.
        var description: String {
            switch self {
            case .fault(let fault): "\(fault)"
            case .reuse: "reuse of the kept tunnel"
            case .afterIdleClose: "after the proxy closed its idle tunnels"
            case .staleAtProxy: "on a kept tunnel the proxy drops as the request comes"
            case .staleAtOrigin: "on a kept tunnel whose origin closes unanswered"
            }
        }
    }

    /// What a request must end with.
    enum Expected: Equatable, CustomStringConvertible {
        /// The origin's own answer.
        case body
        /// An HTTP response of the proxy's with this status (``HTTPConnectionError/unacceptableStatus``).
        case status(Int)
        /// This error.
        case error(HTTPConnectionError)

        /// The expectation, for a failure's history.
        var description: String {
            switch self {
            case .body: "the origin's body"
            case .status(let status): "status \(status)"
            case .error(let error): "\(error)"
            }
        }
    }

    /// Whether the proxy speaks SOCKS5.
    var socks: Bool { kind == .socks5 || kind == .socks5h }

    /// Whether a request to `url` goes through a tunnel (SOCKS5, or `CONNECT` for `https`)
    /// rather than being forwarded.
    func tunnels(_ url: String) -> Bool { socks || url.hasPrefix("https:") }

    /// The faults a fresh connection may meet for a request that `tunnels` or is forwarded.
    func faults(tunnels: Bool) -> [ProxyChaosFault] {
        var faults: [ProxyChaosFault] = [.closeAtOnce, .closeBeforeAnswer, .stall, .closeMidReply, .dropMidResponse, .stallMidResponse]
        if socks {
            faults += [.socksMethodVersion, .socksMethod(0x01), .socksMethod(0xFF), .socksReplyVersion, .socksTruncatedReply,
                       .socksOverlongReply, .socksUnknownAddressType, .socksDomainReply, .socksIPv6Reply]
            faults += (1...9).map { .socksReply(UInt8($0)) }
            faults += withCredentials ? [.socksAuthRefused, .socksMethod(0x00)] : [.socksMethod(0x02)]
        } else {
            faults += [.status(403), .status(407), .status(502), .status(503), .status(500), .interimThenBehave, .garbageHead, .overlongHead]
            if tunnels { faults.append(.bytesAfterEstablished) }
        }
        return faults
    }

    /// The deck a fault for a request that `tunnels` is drawn from: one per list of faults.
    private func deck(tunnels: Bool) -> String {
        socks ? "SOCKS5\(withCredentials ? " with credentials" : "")" : tunnels ? "CONNECT" : "forwarding"
    }

    /// What `request` must end with when the client does not cancel it: a request that meets a
    /// stale kept tunnel goes out once more on a fresh one when it is idempotent, and fails with
    /// ``HTTPConnectionError/staleConnection`` when it is not (it was sent, and may have reached the
    /// origin); otherwise as its fault calls for (``expected(_:tunnels:)``).
    func expected(_ request: Request) -> Expected {
        switch request.step {
        case .staleAtProxy, .staleAtOrigin:
            request.verb.isIdempotent ? .body : .error(.staleConnection)
        case .fault, .reuse, .afterIdleClose:
            expected(request.fault, tunnels: tunnels(request.base))
        }
    }

    /// How many connections the proxy accepts for `request` when the client does not cancel it:
    /// none to reuse a kept tunnel or to fail on a stale one, one for a fresh connection (a fault,
    /// after an idle close, or to send an idempotent request again).
    func connectionsOpened(_ request: Request) -> Int {
        switch request.step {
        case .reuse: 0
        case .fault, .afterIdleClose: 1
        case .staleAtProxy, .staleAtOrigin: request.verb.isIdempotent ? 1 : 0
        }
    }

    /// How many times the origin receives `request` when the client does not cancel it, or `nil`
    /// when its fault leaves that open (a proxy that cuts the answer may or may not have passed
    /// the request on): the origin that closes unanswered receives it once more when it is sent
    /// again, the proxy that drops a stale tunnel passes none of it on.
    func arrivals(_ request: Request) -> Int? {
        switch request.step {
        case .reuse, .afterIdleClose: 1
        case .staleAtProxy: request.verb.isIdempotent ? 1 : 0
        case .staleAtOrigin: request.verb.isIdempotent ? 2 : 1
        case .fault: expected(request) == .body ? 1 : nil
        }
    }

    /// What a request that `tunnels` (or is forwarded) must end with when its fresh connection
    /// meets `fault` and the client does not cancel it, by the native transport's documented rules.
    func expected(_ fault: ProxyChaosFault, tunnels: Bool) -> Expected {
        switch fault {
        case .behave, .interimThenBehave, .socksDomainReply, .socksIPv6Reply, .socksMethod(0x00):
            return .body
        case .dropMidResponse:
            return .error(.connectionLost)
        case .closeAtOnce where kind == .https:
            return .error(.proxyTLSFailed)
        case .closeAtOnce, .closeBeforeAnswer, .closeMidReply, .socksTruncatedReply:
            return .error(tunnels ? .proxyClosedConnection : .connectionLost)
        case .stall, .stallMidResponse:
            return .error(.timedOut)
        case .status(let status) where !tunnels:
            return .status(status)
        case .status(407), .socksMethod(0xFF), .socksMethod(0x02), .socksAuthRefused:
            return .error(.proxyAuthenticationRequired)
        case .status(403), .socksReply(2):
            return .error(.proxyForbidden)
        case .status(502), .status(503), .socksReply(3...6):
            return .error(.proxyCannotReachOrigin)
        case .status, .socksReply:
            return .error(.proxyRejected)
        case .garbageHead:
            return .error(tunnels ? .proxyBadResponse : .badResponse)
        case .overlongHead:
            return .error(tunnels ? .proxyBadResponse : .headTooLarge)
        case .bytesAfterEstablished, .socksMethodVersion, .socksMethod, .socksReplyVersion, .socksOverlongReply, .socksUnknownAddressType:
            return .error(.proxyBadResponse)
        }
    }
}

/// Decks of faults, one per list of faults (``ProxyChaosPlan/faults(tunnels:)``): a deck is
/// shuffled when it is empty and dealt one fault at a time, so that every fault comes up once
/// before any comes twice.
struct FaultDecks {
    private var decks: [String: [ProxyChaosFault]] = [:]

    /// The next fault of deck `name`, made of `faults` (shuffled with `random`) when it is empty.
    mutating func draw(_ faults: [ProxyChaosFault], deck name: String, _ random: inout SeededRandom) -> ProxyChaosFault {
        if decks[name, default: []].isEmpty { decks[name] = faults.shuffled(using: &random) }
        return decks[name]!.removeLast()
    }
}
