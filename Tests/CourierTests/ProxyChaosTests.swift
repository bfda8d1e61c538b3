@testable import Courier
import CourierTestServer
import CourierTestSupport
import Foundation
import Testing

/// The native transport's proxy paths over real sockets: `CONNECT` tunnels, forwarding,
/// `https://` proxies and SOCKS5 with and without a username and password, through a scripted
/// in-process proxy (``ProxyChaosPeer``) that behaves or breaks its protocol at a chosen step,
/// to real origins (a `TestServer`, and ``TLSOriginServer`` inside the tunnels for `https`).
///
/// Each conversation sends its requests (GETs, POSTs of data and of files, PUTs) one at a time,
/// so that the fault the proxy applies to its next connection is the fault of the request that
/// opens it (the proxy's connections are closed, and the client's seen gone, first). Between
/// faults a request reuses the kept tunnel, meets a proxy that closed its idle tunnels, or a kept
/// tunnel that goes stale as it is reused (the proxy drops it, or the origin behind it closes
/// unanswered); the client cancels some. The origins log what arrived, so that a POST is seen to
/// arrive once at most, every body intact. Conversations run 6 at a time. URLSession is left
/// out: on Linux it cannot send through a proxy at all (FoundationNetworking ignores
/// `connectionProxyDictionary`; see `URLSessionProxyTests`). ``ProxyTunnelHTTP2Tests`` sends
/// HTTP/2 through the same proxy.
@Suite("Proxies that misbehave at random")
struct ProxyChaosTests {
    /// The origins every conversation reaches, and the heads they received.
    struct Origins: Sendable {
        /// `http://…` and `https://…` base URLs, each by address and by name.
        let bases: [String]
        /// The CA that signed the TLS origin's certificate (and an `https://` proxy's).
        let ca: Data
        /// The request heads both origins received, as text.
        let heads: @Sendable () -> [String]
        /// The methods and bodies both origins received, by path; which they close unanswered.
        let log: ProxyChaosOriginLog
    }

    /// How long a connection (tunnel, TLS to the origin) may take: what ends a stalled proxy.
    static let connectTimeout: Duration = .seconds(3)

    @Test("30 random conversations of 10 requests through a proxy that misbehaves at a chosen step (CONNECT, forwarding, https://, SOCKS5 with and without a password): each request ends once, with the origin's own body or the error its fault calls for; a kept tunnel is reused, one closed while idle replaced; credentials go only where they belong; nothing leaks")
    func randomFaults() async throws {
        let seed = SeededRandom.seed(default: 0x5EED_0009_0001)
        let certificates = try await TestCertificates.make()
        defer { certificates.remove() }
        let tls = try ServerTLSContext(certificate: certificates.valid.certificate, key: certificates.valid.key)
        let plain = try TestServer()
        defer { plain.shutdown() }
        let plainHeads = Locked<[String]>([])
        let log = ProxyChaosOriginLog()
        plain.route("/pc/*") { request in
            let head = ([request.method + " " + request.target] + request.fields.map { "\($0.name): \($0.value)" }).joined(separator: "\r\n")
            plainHeads.withLock { $0.append(head) }
            guard log.arrive(method: request.method, path: request.path, body: request.body) else { return .script([.close]) }
            return .response(status: 200, body: ProxyChaosOrigin.body(for: request.path))
        }
        let secure = try TLSOriginServer(tls: tls) { head, body in
            let line = (head.components(separatedBy: "\r\n").first ?? "").split(separator: " ")
            guard line.count == 3, log.arrive(method: String(line[0]), path: String(line[1]), body: Data(body)) else { return [] }
            return TLSOriginServer.proxyChaosAnswer(head: head, body: body)
        }
        defer { secure.stop() }
        let origins = Origins(bases: ["http://127.0.0.1:\(plain.port)", "http://localhost:\(plain.port)",
                                      "https://127.0.0.1:\(secure.port)", "https://localhost:\(secure.port)"],
                              ca: certificates.caPEM,
                              heads: { plainHeads.withLock { $0 } + secure.requestHeads }, log: log)
        // The plans are drawn in order before any runs, so that a seed replays the same run.
        var decks = FaultDecks()
        let plans = (0..<30).map { number in
            var random = SeededRandom(seed: seed, stream: number)
            return ProxyChaosPlan(number: number, requestCount: 10, bases: origins.bases, &random, decks: &decks)
        }
        try await withThrowingTaskGroup(of: Void.self) { group in
            for (number, plan) in plans.enumerated() {
                if number >= 6 { try await group.next() }
                group.addTask { try await Self.converse(number, plan, seed: seed, origins: origins, tls: tls) }
            }
            try await group.waitForAll()
        }
    }

    /// One conversation: its proxy, a fresh transport and connection, and the plan's requests,
    /// one at a time.
    private static func converse(_ number: Int, _ plan: ProxyChaosPlan, seed: UInt64, origins: Origins, tls: ServerTLSContext) async throws {
        let context = "conversation \(number) through \(plan.kind)\(plan.withCredentials ? " with credentials" : ""), \(SeededRandom(seed: seed).replayHint)"
        let proxyPassword = "proxy-secret-\(number)", originSecret = "origin-secret-\(number)"
        let peer = try ProxyChaosPeer(speaks: plan.socks ? .socks5 : .http, tls: plan.kind == .https ? tls : nil,
                                      credentials: plan.socks && plan.withCredentials ? ("chaos", proxyPassword) : nil)
        defer { peer.stop() }
        let trusted = TLSOptions(trustRoots: .pem(origins.ca))
        var configuration = NativeTransport.Configuration(maxConnectionsPerHost: 2, connectTimeout: connectTimeout, tls: trusted)
        let credentials = plan.withCredentials ? ProxyCredentials(username: "chaos", password: proxyPassword) : nil
        configuration.proxy = ProxyConfiguration(all: Proxy(plan.kind, host: "127.0.0.1", port: peer.port, credentials: credentials, tls: trusted))
        let files = FileManager.default.temporaryDirectory.appendingPathComponent("courier-proxy-chaos-\(number)-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: files, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: files) }
        try await withLeakCheck { leaks in
            leaks.watch(port: peer.port)
            let transport = leaks.native(configuration)
            let connection = leaks.track(HTTPConnection(baseURL: URL(string: origins.bases[0])!,
                                                        configuration: .init(timeout: .seconds(20), transport: transport, cache: nil)))
            let recorder = leaks.track(EventRecorder())
            connection.delegate = recorder
            let results = Locked<[Int: [Result<HTTPResponse, HTTPConnectionError>]]>([:])
            var ids: [RequestID] = []
            for (index, planned) in plan.requests.enumerated() {
                let (base, step, fault) = (planned.base, planned.step, planned.fault)
                let path = "/pc/c\(number)/r\(index)"
                let url = URL(string: base + path)!
                let tunnels = plan.tunnels(base)
                let previous = index == 0 ? "" : " (after \(plan.requests[index - 1]))"
                let history = "request \(index), \(planned.verb) \(base) (\(tunnels ? "tunnelled" : "forwarded")), \(step)\(previous); \(context)"
                switch step {
                case .fault:
                    // The request's own fresh connection must meet the fault: no connection may
                    // be left to reuse, nor one still opening (a cancelled request's) to take it.
                    let tunnelsGone = await eventually {
                        peer.closeConnections()
                        return peer.log.open == 0 && transport.census.liveConnections == 0
                    }
                    #expect(tunnelsGone, "the last tunnel never closed: \(history)")
                    peer.plan(fault)
                case .reuse, .staleAtProxy, .staleAtOrigin:
                    let tunnelIdle = await eventuallyAsync { await transport.poolSnapshot(for: url)?.idle == 1 }
                    #expect(tunnelIdle, "no idle tunnel to reuse: \(history)")
                    if step == .staleAtProxy { peer.breakTunnelOnNextRequest(.drop) }
                    if step == .staleAtOrigin { origins.log.dropNextArrival(at: path) }
                case .afterIdleClose:
                    peer.closeConnections()
                    let tunnelsClosed = await eventually { peer.log.open == 0 }
                    #expect(tunnelsClosed, "\(history)")
                    if !planned.verb.isIdempotent {
                        // The client must have seen the idle tunnel close (a POST written to it
                        // first would be lost: staleConnection), as the pool promises it does.
                        let seen = await eventuallyAsync { await transport.poolSnapshot(for: url)?.idle ?? 0 == 0 }
                        #expect(seen, "the client never saw its idle tunnel close: \(history)")
                    }
                }
                let accepted = peer.log.accepted, stalls = peer.log.stalls, started = ContinuousClock.now
                var request = HTTPRequest(planned.verb.method, url.absoluteString,
                                          body: try Self.body(planned.verb, for: path, in: files))
                request.headers.set("Bearer \(originSecret)", for: "Authorization")
                let record: @Sendable (Result<HTTPResponse, HTTPConnectionError>) -> Void = { result in
                    results.withLock { $0[index, default: []].append(result) }
                }
                let id = connection.start(request, onDidStart: recorder.onDidStart, onSuccess: { response in
                    record(.success(response))
                    recorder.onSuccess(response)
                }, onError: { error in
                    record(.failure(error))
                    recorder.onError(error)
                })
                ids.append(id)
                switch planned.cancel {
                case .none:
                    break
                case .atStall:
                    let stalled = await eventually { peer.log.stalls > stalls }
                    #expect(stalled, "the proxy never stalled: \(history)")
                    connection.cancel(id)
                case .atRandom(let milliseconds):
                    try await Task.sleep(for: .milliseconds(milliseconds))
                    connection.cancel(id)
                }
                let ended = await eventually { results.withLock { $0[index] != nil } }
                #expect(ended, "never ended: \(history)")
                guard let result = results.withLock({ $0[index]?.first }) else { continue }
                let outcome = CaseOutcome(id: id, result: result)
                let expected = plan.expected(planned)
                let body = ProxyChaosOrigin.body(for: path)
                let cancelAtStall = planned.cancel == .atStall, cancelAtRandom = planned.cancel != .none && !cancelAtStall
                let said = "expected \(cancelAtStall ? "cancelled" : "\(expected)"), the client saw \(outcome.error.map { "\($0)" } ?? "status \(outcome.status ?? 0)"): \(history)"
                if let response = outcome.response {
                    #expect(response.body == body, "a body that is not the origin's: \(said)")
                }
                if cancelAtStall {
                    // A handshake's stall is also ended by the connect timeout: on a loaded machine
                    // that can come before the cancel does.
                    let timeoutMayWin = expected == .error(.timedOut) && outcome.error == .timedOut
                    #expect(outcome.error == .cancelled || timeoutMayWin, "\(said)")
                } else if !(cancelAtRandom && outcome.error == .cancelled) {
                    switch expected {
                    case .body: #expect(outcome.response?.status.code == 200, "\(said)")
                    case .status(let status): #expect(outcome.error == .unacceptableStatus && outcome.status == status, "\(said)")
                    case .error(let error): #expect(outcome.error == error, "\(said)")
                    }
                    // A stalled proxy is ended by the connect timeout, not the request's (20 s).
                    #expect(expected != .error(.timedOut) || ContinuousClock.now - started < .seconds(10), "\(said)")
                }
                // A request cancelled at random may end before its connection reaches the proxy.
                let opened = peer.log.accepted - accepted
                let mayNotHaveOpened = cancelAtRandom && outcome.error == .cancelled && opened == 0
                let cancelled = planned.cancel != .none && outcome.error == .cancelled
                if !cancelled {
                    #expect(opened == plan.connectionsOpened(planned) || mayNotHaveOpened, "\(opened) connections opened: \(said)")
                }
                let arrivals = origins.log.arrivals(at: path)
                if let count = plan.arrivals(planned), !cancelled {
                    #expect(arrivals.count == count, "the origin received it \(arrivals.count) times: \(said)")
                }
                if outcome.response != nil {
                    #expect(!arrivals.isEmpty, "a body the origin never sent: \(said)")
                }
            }
            try await Task.sleep(for: .milliseconds(100))  // a late second terminal callback would land here
            for (index, id) in ids.enumerated() {
                let closures = results.withLock { $0[index]?.count ?? 0 }
                let delegate = recorder.events.filter { $0.isTerminal && $0.requestID == id }.count
                #expect(closures == 1 && delegate == 1, "request \(index): \(closures) terminal closures, \(delegate) delegate callbacks; \(context)")
            }
            for (index, planned) in plan.requests.enumerated() {
                let path = "/pc/c\(number)/r\(index)", arrivals = origins.log.arrivals(at: path)
                let upload = planned.verb == .get ? Data() : ProxyChaosOrigin.upload(for: path)
                #expect(planned.verb.isIdempotent || arrivals.count <= 1, "a POST reached the origin \(arrivals.count) times: request \(index); \(context)")
                #expect(arrivals.allSatisfy { $0.method == planned.verb.method.rawValue && $0.body == upload },
                        "a body that arrived changed: request \(index), \(planned.verb); \(context)")
            }
            checkCredentials(plan, peer: peer, originHeads: origins.heads().filter { $0.contains("/pc/c\(number)/") },
                             proxyPassword: proxyPassword, originSecret: originSecret, context)
        }
    }

    /// The body of a request of `verb` to `path`: none for a GET, else
    /// ``ProxyChaosOrigin/upload(for:)`` of it, in memory or written to a file in `directory`.
    private static func body(_ verb: ProxyChaosPlan.Verb, for path: String, in directory: URL) throws -> HTTPRequest.Body {
        let upload = ProxyChaosOrigin.upload(for: path)
        switch verb {
        case .get:
            return .none
        case .postData, .put:
            return .data(upload)
        case .postFile:
            let file = directory.appendingPathComponent(path.split(separator: "/").joined(separator: "-"))
            try upload.write(to: file)
            return try .file(file)
        }
    }

    /// The proxy's credentials reach only the proxy (every `CONNECT` and forwarded head, or
    /// every RFC 1929 exchange) and never an origin; the origin's credentials reach the origin
    /// and never a `CONNECT` head or the SOCKS5 exchange.
    private static func checkCredentials(_ plan: ProxyChaosPlan, peer: ProxyChaosPeer, originHeads: [String],
                                         proxyPassword: String, originSecret: String, _ context: String) {
        let basic = ProxyCredentials(username: "chaos", password: proxyPassword).basicAuthorization
        let log = peer.log
        for head in log.heads {
            let lines = head.lowercased().components(separatedBy: "\r\n")
            let proxyAuthorization = lines.filter { $0.hasPrefix("proxy-authorization:") }
            #expect(proxyAuthorization == (plan.withCredentials ? ["proxy-authorization: \(basic.lowercased())"] : []), "\(head); \(context)")
            if head.hasPrefix("CONNECT ") {
                #expect(!head.contains(originSecret) && !lines.contains { $0.hasPrefix("authorization:") }, "the origin's credentials in CONNECT: \(head); \(context)")
            }
        }
        #expect(log.socksCredentials.allSatisfy { $0 == "chaos:\(proxyPassword)" }, "\(log.socksCredentials); \(context)")
        #expect(plan.socks && plan.withCredentials || log.socksCredentials.isEmpty, "\(log.socksCredentials); \(context)")
        for head in originHeads {
            #expect(!head.lowercased().contains("proxy-authorization") && !head.contains(proxyPassword) && !head.contains(basic),
                    "the proxy's credentials reached the origin: \(head); \(context)")
            #expect(head.contains("Bearer \(originSecret)"), "the origin's credentials did not reach it: \(head); \(context)")
        }
    }
}
