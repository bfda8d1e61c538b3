import Courier

/// One client configuration of the TLS conversation test, as the model sees it: what it
/// trusts, pins and presents, and whether it resumes sessions.
struct TLSConversationClient: Sendable, CustomStringConvertible {
    /// Which roots the chain must reach.
    enum Trust: Sendable { case system, testCA, noChainCheck }
    /// Which pin it sets, if any.
    enum Pin: Sendable { case none, firstKey, unusedKey }
    /// Which client certificate it presents when asked.
    enum Identity: Sendable { case none, signedByTestCA, stranger }

    let trust: Trust
    let pin: Pin
    let identity: Identity
    let resumes: Bool
    let requiresTLS13: Bool

    /// The configurations a conversation picks from.
    static let all: [TLSConversationClient] = [
        .init(trust: .system, pin: .none, identity: .none, resumes: true, requiresTLS13: false),
        .init(trust: .testCA, pin: .none, identity: .none, resumes: true, requiresTLS13: false),
        .init(trust: .testCA, pin: .none, identity: .none, resumes: false, requiresTLS13: false),
        .init(trust: .testCA, pin: .firstKey, identity: .none, resumes: true, requiresTLS13: false),
        .init(trust: .testCA, pin: .unusedKey, identity: .signedByTestCA, resumes: true, requiresTLS13: false),
        .init(trust: .noChainCheck, pin: .firstKey, identity: .none, resumes: true, requiresTLS13: false),
        .init(trust: .testCA, pin: .none, identity: .signedByTestCA, resumes: true, requiresTLS13: false),
        .init(trust: .testCA, pin: .none, identity: .stranger, resumes: true, requiresTLS13: false),
        .init(trust: .testCA, pin: .firstKey, identity: .signedByTestCA, resumes: true, requiresTLS13: true),
        .init(trust: .noChainCheck, pin: .firstKey, identity: .signedByTestCA, resumes: false, requiresTLS13: false),
    ]

    var description: String {
        "trust \(trust) pin \(pin) identity \(identity) resumes \(resumes)\(requiresTLS13 ? " TLS1.3+" : "")"
    }
}

/// What an origin does now, as the model sees it.
struct TLSConversationServer: Sendable {
    var leaf: TLSConversationLeaf = .good
    var requiresClientCertificate = false
    var maximumTLS12 = false
    /// Bumped on every ``TLSConversationOrigin/reconfigure(requiresClientCertificate:maximumTLS12:)``.
    var epoch = 0
}

/// The independent model of the TLS conversation test: from the clients' settings, the
/// origins' settings and what happened before, it predicts each request's ending (success or
/// the exact ``HTTPConnectionError`` kind), whether it ran on a kept connection, and whether a
/// new connection's session was resumed. It keeps, per client, the sessions a client may offer
/// to each peer (host and port), as the rules in README.md say: a session is offered only to the
/// host and port that issued it, a TLS 1.3 ticket once, a TLS 1.2 session while it is newest; a
/// failed handshake forgets the peer's sessions; two refused offers in a row stop storing the
/// peer's sessions for a minute (longer than a conversation); and the idle connections of
/// each pool, which only a request that succeeded adds to.
struct TLSConversationModel {
    /// A session a client holds: the server epoch that issued it and whether it is a reusable TLS 1.2 one.
    struct Session: Equatable {
        let origin: Int
        let epoch: Int
        let reusable: Bool
    }

    /// What the model predicts for one request.
    struct Prediction: Equatable, CustomStringConvertible {
        /// `nil` for success.
        var error: HTTPConnectionError?
        /// On a kept connection (no handshake).
        var kept = false
        /// For a new connection that succeeds: whether the server resumed a session.
        var resumed = false
        /// For a new connection that succeeds: `TLSv1.2` or `TLSv1.3`.
        var version = ""

        var description: String {
            if let error { return "\(error)" }
            return kept ? "success on a kept connection" : "success, \(version), resumed \(resumed)"
        }
    }

    /// A pool: client index, host name, origin index.
    struct PoolKey: Hashable { let client: Int; let host: String; let origin: Int }
    /// A session cache slot: client index, host name, origin index.
    typealias PeerKey = PoolKey

    let clients: [TLSConversationClient]
    var servers: [TLSConversationServer]
    private var idle: [PoolKey: Int] = [:]
    private var sessions: [PeerKey: [Session]] = [:]
    private var refusals: [PeerKey: Int] = [:]
    private var paused: Set<PeerKey> = []

    init(clients: [TLSConversationClient], origins: Int) {
        self.clients = clients
        servers = Array(repeating: TLSConversationServer(), count: origins)
    }

    /// What the model holds for a peer (for failure messages).
    func state(of key: PeerKey) -> String {
        "sessions \(sessions[key] ?? []) refusals \(refusals[key, default: 0]) paused \(paused.contains(key))"
    }

    /// The idle connections the model expects in a pool.
    func idleConnections(_ key: PoolKey) -> Int { idle[key, default: 0] }

    /// Predicts one request and takes in its effects. `close` asks the server to close the
    /// connection after answering.
    mutating func request(_ key: PoolKey, close: Bool) -> Prediction {
        if idle[key, default: 0] > 0 {
            if close { idle[key, default: 0] -= 1 }
            return Prediction(kept: true)
        }
        let client = clients[key.client]
        let server = servers[key.origin]
        let tls12 = server.maximumTLS12
        // The session offered: the newest the client holds for this host and port.
        var offered: Session?
        if client.resumes, var list = sessions[key], let last = list.last {
            offered = last
            if !last.reusable { list.removeLast() }
            sessions[key] = list.isEmpty ? nil : list
        }
        let resumed = offered.map { $0.epoch == server.epoch } ?? false
        if let error = resumed ? nil : Self.fullHandshakeError(client, server, host: key.host) {
            let clientCertificateAfterHandshake = !tls12 && (error == .clientCertificateRequired || error == .clientCertificateRejected)
            // Under TLS 1.3 the client's handshake ended (and counted the offer) before the server
            // refused its certificate; either way the failure forgets the peer's sessions.
            if clientCertificateAfterHandshake, offered != nil { refuse(key) }
            sessions[key] = nil
            return Prediction(error: error)
        }
        if offered != nil {
            if resumed { refusals[key] = nil } else { refuse(key) }
        }
        if client.resumes, !paused.contains(key) {
            var list = sessions[key] ?? []
            if tls12 {
                list.removeAll(where: \.reusable)
                list.append(Session(origin: key.origin, epoch: server.epoch, reusable: true))
            } else {
                // OpenSSL sends two tickets after a full handshake, one after a resumption.
                for _ in 0..<(resumed ? 1 : 2) {
                    list.append(Session(origin: key.origin, epoch: server.epoch, reusable: false))
                }
            }
            sessions[key] = Array(list.suffix(4))
        }
        if !close { idle[key, default: 0] += 1 }
        return Prediction(resumed: resumed, version: tls12 ? "TLSv1.2" : "TLSv1.3")
    }

    /// A handshake that offered a session and was not resumed but succeeded.
    private mutating func refuse(_ key: PeerKey) {
        let count = refusals[key, default: 0] + 1
        if count >= 2 {
            sessions[key] = nil
            paused.insert(key)
            refusals[key] = nil
        } else {
            refusals[key] = count
        }
    }

    /// The error a full handshake ends in, or `nil` when it succeeds: the version, then the
    /// server's certificate as it arrives (chain, then name, then dates, as OpenSSL checks them;
    /// then the name when the chain is not verified, then the pins), and only then, under TLS
    /// 1.2 and 1.3 alike, the server's verdict on the client certificate, which a server that
    /// failed the checks never receives.
    static func fullHandshakeError(_ client: TLSConversationClient, _ server: TLSConversationServer,
                                   host: String) -> HTTPConnectionError? {
        if client.requiresTLS13 && server.maximumTLS12 { return .tlsFailed }
        let leaf = server.leaf
        let nameMatches = matches(leaf, host: host)
        // The client's own checks: the name when the chain is not verified, then the pins.
        var deferredError: HTTPConnectionError? = switch client.pin {
        case .none: nil
        case .firstKey: leaf.hasFirstKey ? nil : .pinMismatch
        case .unusedKey: .pinMismatch
        }
        switch client.trust {
        case .system:
            return .untrustedCertificate
        case .testCA:
            if !leaf.chainsToTestCA { return .untrustedCertificate }
            if !nameMatches { return .hostnameMismatch }
            if !leaf.isInDate { return .expiredCertificate }
        case .noChainCheck:
            if !nameMatches { deferredError = .hostnameMismatch }
        }
        let identityError: HTTPConnectionError? = switch (server.requiresClientCertificate, client.identity) {
        case (false, _), (true, .signedByTestCA): nil
        case (true, .none): .clientCertificateRequired
        case (true, .stranger): .clientCertificateRejected
        }
        return deferredError ?? identityError
    }

    /// Whether the leaf names `host`: an IP literal only by an iPAddress entry; a name by an
    /// equal DNS entry, or by `*.rest` when the host is one more label in front of `rest`; never
    /// by a partial wildcard or the subject's common name.
    static func matches(_ leaf: TLSConversationLeaf, host: String) -> Bool {
        let isIP = host.split(separator: ".").allSatisfy { !$0.isEmpty && $0.allSatisfy(\.isNumber) }
        return leaf.subjectAltNames.contains { entry in
            if isIP { return entry == "IP:\(host)" }
            guard entry.hasPrefix("DNS:") else { return false }
            let name = entry.dropFirst(4)
            if name == host { return true }
            guard name.hasPrefix("*.") else { return false }
            let rest = name.dropFirst(2)
            guard let dot = host.firstIndex(of: ".") else { return false }
            return host[host.index(after: dot)...] == rest && host[..<dot].count > 0
        }
    }
}
