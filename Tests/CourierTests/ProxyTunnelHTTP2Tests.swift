@testable import Courier
import CourierTestSupport
import Foundation
import Testing

/// HTTP/2 inside the tunnels of the proxy chaos test's scripted proxy (``ProxyChaosPeer``):
/// `CONNECT` through an `http://` and an `https://` proxy, and SOCKS5 (`socks5`, `socks5h`), each
/// with credentials, to nghttpd over TLS (ALPN `h2`), an independent HTTP/2 server that echoes
/// uploads and logs every frame and field it received.
@Suite("HTTP/2 inside proxy tunnels")
struct ProxyTunnelHTTP2Tests {
    /// The page every GET fetches: 30 KB, more than the proxy passes before it stalls a tunnel.
    static let page = Data((0..<30_000).map { UInt8(truncatingIfNeeded: $0 &* 31 &+ $0 >> 9) })

    @Test("requests multiplexed in one tunnel (CONNECT over http:// and https:// proxies, SOCKS5): a burst of GETs, POSTs of data and of a file and a PUT shares one tunnel; a kept tunnel the proxy breaks under a burst sends its GETs and PUT again on one new tunnel and fails its POSTs with connectionLost, none of them received twice; a new tunnel stalled and closed mid-flight fails its PUT and POSTs, repeating none; Proxy-Authorization reaches only the proxy, Authorization only the origin",
          .enabled(if: NGHTTPD.isInstalled && TestCertificates.isAvailable, NGHTTPD.skipReason))
    func multiplexedInTunnels() async throws {
        // One set of certificates (making them takes seconds) for the four proxies, run at once.
        let certificates = try await TestCertificates.make()
        defer { certificates.remove() }
        try await withThrowingTaskGroup(of: Void.self) { group in
            for kind in [Proxy.Kind.http, .https, .socks5, .socks5h] {
                group.addTask { try await Self.converse(through: kind, certificates: certificates) }
            }
            try await group.waitForAll()
        }
    }

    /// The three bursts through a proxy of `kind` to an nghttpd of its own, serving `certificates`.
    private static func converse(through kind: Proxy.Kind, certificates: TestCertificates) async throws {
        let tls = try ServerTLSContext(certificate: certificates.valid.certificate, key: certificates.valid.key)
        let server = try await NGHTTPD.start(files: ["page.bin": Self.page], tls: (certificates.valid.certificate, certificates.valid.key))
        defer { server.stop() }
        let socks = kind == .socks5 || kind == .socks5h
        let proxyPassword = "proxy-secret-h2", originSecret = "origin-secret-h2"
        let peer = try ProxyChaosPeer(speaks: socks ? .socks5 : .http, tls: kind == .https ? tls : nil,
                                      credentials: socks ? ("chaos", proxyPassword) : nil)
        defer { peer.stop() }
        let files = FileManager.default.temporaryDirectory.appendingPathComponent("courier-proxy-h2-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: files, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: files) }
        let trusted = TLSOptions(trustRoots: .pem(certificates.caPEM))
        var configuration = NativeTransport.Configuration(connectTimeout: .seconds(3), tls: trusted)
        configuration.proxy = ProxyConfiguration(all: Proxy(kind, host: "127.0.0.1", port: peer.port,
                                                            credentials: ProxyCredentials(username: "chaos", password: proxyPassword),
                                                            tls: trusted))
        await withLeakCheck { leaks in
            leaks.watch(port: peer.port)
            let transport = leaks.native(configuration)
            let connection = leaks.track(HTTPConnection(baseURL: server.url("/"), configuration: .init(timeout: .seconds(20), transport: transport, cache: nil)))
            let burst = Burst(connection: connection, files: files, secret: originSecret)

            // 1. A burst to a new origin shares one tunnel.
            let first = await burst.send(phase: 1)
            for (request, result) in first {
                #expect(request.succeeded(result), "\(kind), \(request): \(result)")
                #expect(server.arrivals(at: request.path) == 1, "\(kind), \(request)")
            }
            #expect(peer.log.accepted == 1, "\(kind): \(peer.log.accepted) tunnels for one burst")
            #expect(server.sessionCount() == 1, "\(kind): nghttpd saw \(server.sessionCount()) connections")

            // 2. The kept tunnel breaks under the next burst, once every body went onto it.
            peer.breakTunnelOnNextRequest(.stall)
            let uploaded = burst.requests(phase: 2).reduce(0) { $0 + $1.upload.count }
            let second = await burst.send(phase: 2) {
                let held = await eventually { peer.log.stalledBytes >= uploaded }
                #expect(held, "\(kind): the proxy held \(peer.log.stalledBytes) of \(uploaded) bytes")
                peer.closeConnections()
            }
            for (request, result) in second {
                if request.verb.isIdempotent {
                    #expect(request.succeeded(result), "\(kind), \(request) on the broken tunnel: \(result)")
                    #expect(server.arrivals(at: request.path) == 1, "\(kind), \(request)")
                } else {
                    #expect(result.error == .connectionLost, "\(kind), \(request) on the broken tunnel: \(result)")
                    #expect(server.arrivals(at: request.path) == 0, "\(kind), \(request)")
                }
            }
            #expect(peer.log.accepted == 2, "\(kind): \(peer.log.accepted) tunnels after the broken one")

            // 3. A fresh tunnel stalls mid-flight, then closes once every body went onto it: no
            // stream is answered or repeated (the connection had answered none).
            let closed = await eventually {
                peer.closeConnections()
                return peer.log.open == 0 && transport.census.liveConnections == 0
            }
            #expect(closed, "\(kind): the tunnels never closed")
            peer.plan(.stallMidResponse)
            let stalls = peer.log.stalls, sent = peer.log.relayedBytes + peer.log.stalledBytes
            let uploads = burst.requests(phase: 3).reduce(0) { $0 + $1.upload.count }
            let third = await burst.send(phase: 3) {
                let stalled = await eventually { peer.log.stalls > stalls && peer.log.relayedBytes + peer.log.stalledBytes - sent >= uploads }
                #expect(stalled, "\(kind): the proxy never stalled, or took \(peer.log.relayedBytes + peer.log.stalledBytes - sent) of \(uploads) bytes")
                peer.closeConnections()
            }
            for (request, result) in third {
                #expect(result.error == .connectionLost, "\(kind), \(request) on the tunnel closed mid-flight: \(result)")
                #expect(server.arrivals(at: request.path) <= 1, "\(kind), \(request)")
            }
            #expect(peer.log.accepted == 3, "\(kind): \(peer.log.accepted) tunnels")

            // Where the credentials went.
            let basic = ProxyCredentials(username: "chaos", password: proxyPassword).basicAuthorization
            for head in peer.log.heads {
                #expect(head.contains("Proxy-Authorization: \(basic)") && !head.lowercased().contains("\nauthorization:")
                        && !head.contains(originSecret), "\(kind): \(head)")
            }
            #expect(peer.log.socksCredentials == (socks ? Array(repeating: "chaos:\(proxyPassword)", count: 3) : []), "\(kind)")
            let log = server.log()
            #expect(log.contains("authorization: Bearer \(originSecret)"), "\(kind): nghttpd never saw the origin's credentials")
            #expect(!log.contains("proxy-authorization") && !log.contains(proxyPassword) && !log.contains(basic),
                    "\(kind): the proxy's credentials reached the origin")
        }
    }
}

/// The bursts of ``ProxyTunnelHTTP2Tests``: phases 1 and 2 send 3 GETs, a POST of data, a POST of
/// a file and a PUT at once, phase 3 the PUT and the POSTs alone (whose bodies show when all of
/// them are on the tunnel), on paths of their own, each carrying the origin's credentials.
private struct Burst {
    /// One request of a burst.
    struct Request: CustomStringConvertible {
        let verb: ProxyChaosPlan.Verb
        let path: String

        /// What it uploads: ``ProxyChaosOrigin/upload(for:)`` of its path, nothing for a GET.
        var upload: Data { verb == .get ? Data() : ProxyChaosOrigin.upload(for: path) }

        /// Whether `result` is nghttpd's answer over HTTP/2: the page for a GET, the upload echoed otherwise.
        func succeeded(_ result: Result<HTTPResponse, HTTPConnectionError>) -> Bool {
            guard case .success(let response) = result else { return false }
            return response.status.code == 200 && response.metrics?.httpVersion == "HTTP/2"
                && response.body == (verb == .get ? ProxyTunnelHTTP2Tests.page : upload)
        }

        var description: String { "\(verb) \(path)" }
    }

    let connection: HTTPConnection
    let files: URL
    let secret: String

    /// The requests of `phase`.
    func requests(phase: Int) -> [Request] {
        let verbs: [ProxyChaosPlan.Verb] = phase == 3 ? [.put, .postData, .postFile] : [.get, .postData, .get, .postFile, .put, .get]
        return verbs.enumerated().map { index, verb in
            Request(verb: verb, path: verb == .get ? "/page.bin?p\(phase)r\(index)" : "/echo/p\(phase)r\(index)")
        }
    }

    /// Sends the requests of `phase` at once, runs `meanwhile` while they are under way, and
    /// returns how each ended (after it ended, 20 s at most by the request timeout).
    func send(phase: Int, meanwhile: @Sendable () async -> Void = {}) async -> [(Request, Result<HTTPResponse, HTTPConnectionError>)] {
        let requests = requests(phase: phase)
        return await withTaskGroup(of: (Int, Result<HTTPResponse, HTTPConnectionError>).self) { group in
            for (index, request) in requests.enumerated() {
                let (connection, files, secret) = (connection, files, secret)
                group.addTask {
                    do {
                        let body: HTTPRequest.Body
                        switch request.verb {
                        case .get: body = .none
                        case .postData, .put: body = .data(request.upload)
                        case .postFile:
                            let file = files.appendingPathComponent("p\(phase)r\(index)")
                            try request.upload.write(to: file)
                            body = try .file(file)
                        }
                        var http = HTTPRequest(request.verb.method, request.path, body: body)
                        http.headers.set("Bearer \(secret)", for: "Authorization")
                        return (index, .success(try await connection.send(http)))
                    } catch let error as HTTPConnectionError {
                        return (index, .failure(error))
                    } catch {
                        return (index, .failure(.connectionLost.with(detail: "\(error)")))
                    }
                }
            }
            await meanwhile()
            var results: [Int: Result<HTTPResponse, HTTPConnectionError>] = [:]
            for await (index, result) in group { results[index] = result }
            return requests.enumerated().map { ($1, results[$0]!) }
        }
    }
}

private extension Result where Failure == HTTPConnectionError {
    /// The error, or `nil` for a success.
    var error: HTTPConnectionError? {
        if case .failure(let error) = self { return error }
        return nil
    }
}

extension NGHTTPD {
    /// How many requests for `path` (`:path`, query included) nghttpd received, from its frame log.
    func arrivals(at path: String) -> Int {
        log().split(separator: "\n").filter { $0.contains("recv (stream_id=") && $0.hasSuffix(" :path: \(path)") }.count
    }
}
