/// What a ``ProxyChaosPeer`` does with the next connection it accepts: behave (open the
/// tunnel, or forward, and relay faithfully), or break its protocol at one step.
enum ProxyChaosFault: Hashable, Sendable, CustomStringConvertible {
    /// Opens the tunnel (or forwards) and relays every byte both ways.
    case behave
    /// Closes the connection as soon as it is accepted (before any TLS with the client).
    case closeAtOnce
    /// Reads the request (`CONNECT`, a forwarded request, or the SOCKS5 greeting), then closes.
    case closeBeforeAnswer
    /// Reads the request (for SOCKS5: the `CONNECT` request), then never answers.
    case stall
    /// Answers the HTTP request with this status, `Connection: close`, and closes.
    case status(Int)
    /// Answers `100 Continue` first, then behaves.
    case interimThenBehave
    /// Answers a status line that is no status line (`HTTP/1.1 2OO OK`).
    case garbageHead
    /// Answers a head of more than 100 KB.
    case overlongHead
    /// Sends half of a `200` status line, then closes.
    case closeMidReply
    /// Answers `CONNECT` with `200` and bytes the origin never sent, in one write.
    case bytesAfterEstablished
    /// Chooses SOCKS5 method 0 with version byte 4.
    case socksMethodVersion
    /// Chooses this SOCKS5 method byte, whatever was offered.
    case socksMethod(UInt8)
    /// Refuses the RFC 1929 username and password (status 1).
    case socksAuthRefused
    /// Replies to the SOCKS5 `CONNECT` with this code (RFC 1928 §6).
    case socksReply(UInt8)
    /// Replies to the SOCKS5 `CONNECT` with version byte 4.
    case socksReplyVersion
    /// Sends the first 6 of the 10 bytes of an IPv4 reply, then closes.
    case socksTruncatedReply
    /// Sends a domain-name reply with 3 bytes more than its length byte says, in one write.
    case socksOverlongReply
    /// Replies with address type 2, which RFC 1928 does not define (the reply's first 4 bytes).
    case socksUnknownAddressType
    /// Succeeds with a domain-name bound address (ATYP 3), then behaves.
    case socksDomainReply
    /// Succeeds with an IPv6 bound address (ATYP 4), then behaves.
    case socksIPv6Reply
    /// Opens the tunnel, then closes both sides after relaying 12,000 bytes of the origin's answer.
    case dropMidResponse
    /// Opens the tunnel, then stops relaying after 12,000 bytes of the origin's answer (the
    /// client must give up: the test cancels).
    case stallMidResponse

    /// The fault's name, for a failure's history.
    var description: String {
        switch self {
        case .behave: "behave"
        case .closeAtOnce: "close at once"
        case .closeBeforeAnswer: "close before answering"
        case .stall: "stall"
        case .status(let status): "status \(status)"
        case .interimThenBehave: "100 then behave"
        case .garbageHead: "garbage head"
        case .overlongHead: "over-long head"
        case .closeMidReply: "close mid-reply"
        case .bytesAfterEstablished: "bytes after 200"
        case .socksMethodVersion: "SOCKS method reply version 4"
        case .socksMethod(let method): "SOCKS method \(method)"
        case .socksAuthRefused: "SOCKS auth refused"
        case .socksReply(let code): "SOCKS reply \(code)"
        case .socksReplyVersion: "SOCKS reply version 4"
        case .socksTruncatedReply: "SOCKS reply truncated"
        case .socksOverlongReply: "SOCKS reply over-long"
        case .socksUnknownAddressType: "SOCKS reply ATYP 2"
        case .socksDomainReply: "SOCKS domain-name reply"
        case .socksIPv6Reply: "SOCKS IPv6 reply"
        case .dropMidResponse: "drop mid-response"
        case .stallMidResponse: "stall mid-response"
        }
    }

    /// Whether the peer stops answering (the test counts on ``ProxyChaosPeer/stalls`` to know
    /// when it has).
    var stalls: Bool { self == .stall || self == .stallMidResponse }
}
