@testable import Courier
import CourierTestServer
import Foundation
import Testing

/// One random conversation between two ``HTTPConnection``s that share an ``HTTPCache`` and a
/// ``TaggingServer``, on a virtual clock.
///
/// Each step moves the clock, picks a request (URL, method, credential, fields `Vary` may name,
/// a request directive, a cache policy) and the server's answer (status, `Cache-Control`,
/// `Expires`, `Last-Modified`, `ETag`, `Vary`, `Set-Cookie`, `Age`, and a `304` or a new answer
/// to a conditional request), sends it and checks what came back. The server tags every answer,
/// so an answer from the cache names the exchange that produced it, and:
/// - it was produced for the same URL and exactly the same credentials and default headers;
/// - a credentialed request's answer had explicit permission (`public`, `must-revalidate`,
///   shared `s-maxage`); a shared cache serves nothing `private`; nothing `no-store` (response,
///   either request, or a `304`'s update) is served; `Set-Cookie` never comes from the cache;
/// - its `Vary` fields had the same values; `Vary: *` is never served; nothing stored before a
///   successful unsafe request on the URL is served; the body and status are the stored ones;
/// - with the default policy it was fresh (its own lifetime and age on the virtual clock); a
///   revalidation sent the entry's own `If-None-Match` / `If-Modified-Since` and got a `304`.
/// The model keeps its own store, written from ``HTTPCache``'s documented rules, predicts every
/// outcome (hit, revalidation, load, `notCached`), and checks after each step the variant the
/// cache holds, its statistics, the response's metrics, and that no credential reached the disk.
/// A conversation stops at its first failing step.
struct CacheConversation {
    /// What a conversation saw, summed over a run to show the properties were exercised.
    struct Coverage {
        var steps = 0, hits = 0, revalidations = 0, credentialedHits = 0, variedHits = 0
        var notCached = 0, invalidations = 0, restarts = 0, failedConversations = 0

        static func + (a: Coverage, b: Coverage) -> Coverage {
            Coverage(steps: a.steps + b.steps, hits: a.hits + b.hits, revalidations: a.revalidations + b.revalidations,
                     credentialedHits: a.credentialedHits + b.credentialedHits, variedHits: a.variedHits + b.variedHits,
                     notCached: a.notCached + b.notCached, invalidations: a.invalidations + b.invalidations,
                     restarts: a.restarts + b.restarts, failedConversations: a.failedConversations + b.failedConversations)
        }
    }

    /// What the model expects the cache to do with a request.
    enum Expected {
        case hit(ModelEntry)
        case revalidate(ModelEntry)
        case load
        case notCached
        /// An unsafe method: sent as it is.
        case unsafe
    }

    /// An answer the server sent, and the request it answered.
    struct Sent {
        let step: Int
        let request: PickedRequest
        let response: PickedResponse
        let body: Data
    }

    static let paths: [(target: String, query: [HTTPRequest.QueryItem])] = [
        ("/a", []), ("/b", []), ("/items", [.init("page", "2")]), ("/me", [.init("token", "t0k")]),
    ]
    /// The path whose URL holds a secret-looking query parameter: never written to disk.
    static let secretPath = 3
    static let credentials: [[(name: String, value: String)]] = [
        [("Authorization", "Bearer alice")], [("Authorization", "Bearer bob")], [("Cookie", "session=alice")],
        [("Cookie", "session=bob")], [("X-API-Key", "k1")], [("Authorization", "Bearer alice"), ("Cookie", "session=alice")],
    ]

    let label: String
    /// The two credentials of this conversation's users (from ``credentials``).
    let users: [[(name: String, value: String)]]
    let shared: Bool
    let directory: URL?
    var random: SeededRandom
    let clock = ConversationClock()
    let server: TaggingServer
    var cache: HTTPCache
    var connections: [HTTPConnection] = []

    var entries: [ModelKey: [ModelEntry]] = [:]
    var sent: [String: Sent] = [:]
    /// The step of the last successful unsafe request on each path.
    var invalidatedAt: [Int: Int] = [:]
    var statistics = HTTPCache.Statistics()
    /// The directives of the `304` the server plans, if it sends one.
    var notModifiedControl: PickedDirectives?
    var step = 0
    var history: [String] = []
    var failures: [String] = []
    var coverage = Coverage()

    init(seed: UInt64, index: Int, directory: URL) {
        random = SeededRandom(seed: seed, stream: index)
        shared = Bool.random(using: &random)
        users = Array(Self.credentials.shuffled(using: &random).prefix(2))
        self.directory = Int.random(in: 0..<4, using: &random) == 0 ? directory : nil
        label = "seed 0x\(String(seed, radix: 16)), conversation \(index) (\(shared ? "shared" : "private")\(self.directory == nil ? "" : ", on disk"))"
        server = TaggingServer(clock: clock)
        cache = HTTPCache(scope: .private)
        restart()
    }

    /// A new cache on the same directory, and new connections: memory is lost, the disk stays.
    mutating func restart() {
        cache = HTTPCache(directory: directory, scope: shared ? .shared : .private, now: { [clock] in clock.now })
        connections = [[:], [PickedRequest.tenant.name: PickedRequest.tenant.value]].map { defaults in
            let configuration = HTTPConnection.Configuration(
                cachePolicy: .useProtocolCachePolicy, retryPolicy: .never, validation: .statusCodes(100..<600),
                headers: HTTPHeaders(defaults.map { ($0.key, $0.value) }), transport: server, redirectPolicy: .doNotFollow, cache: cache)
            return HTTPConnection(baseURL: URL(string: "http://cache.test")!, configuration: configuration)
        }
        entries = entries.filter { key, _ in !key.carriesCredential && key.path != Self.secretPath }
        statistics = HTTPCache.Statistics()
    }

    /// Plays up to `count` steps; returns what was covered.
    mutating func play(_ count: Int) async -> Coverage {
        for _ in 0..<count where failures.isEmpty {
            await playStep()
        }
        if !failures.isEmpty {
            coverage.failedConversations = 1
            let context = "\(label), step \(step)\nlast steps:\n" + history.suffix(12).joined(separator: "\n")
            for failure in failures { Issue.record(Comment(rawValue: "\(failure)\n\(context)")) }
        }
        return coverage
    }

    // MARK: - A step

    private mutating func playStep() async {
        step += 1
        coverage.steps += 1
        switch Int.random(in: 0..<100, using: &random) {
        case 0..<40: break
        case 40..<80: clock.advance(by: Int.random(in: 1...10, using: &random))
        case 80..<95: clock.advance(by: Int.random(in: 11...200, using: &random))
        default: clock.advance(by: Int.random(in: 1_000...30_000, using: &random))
        }
        if directory != nil, Int.random(in: 0..<100, using: &random) < 3 {
            restart()
            coverage.restarts += 1
            history.append("step \(step): restart")
        }
        let request = pickRequest()
        let expected = predict(request)
        let response = request.isUnsafe ? PickedResponse(status: pick([(35, 200), (10, 201), (15, 204), (10, 303), (10, 400), (10, 404), (10, 500)]))
            : pickResponse()
        server.plan = plan(response, expected)
        let before = server.log.count
        let result = await send(request)
        let exchanges = Array(server.log[before...])
        for exchange in exchanges where exchange.response.status.code != 304 {
            sent[exchange.tag] = Sent(step: step, request: request, response: response, body: exchange.response.body)
        }
        history.append("step \(step) t=\(Int(clock.now.timeIntervalSince1970) - 1_700_000_000): \(describe(request)) expected \(describe(expected))"
                       + " → \(describe(result)); server: " + exchanges.map(describe).joined(separator: ", "))
        checkAnswer(request, expected, result, exchanges)
        update(request, expected, response, exchanges)
        if failures.isEmpty { checkStore(request, exchanges) }
        if failures.isEmpty { checkStatistics() }
        if failures.isEmpty { checkDisk() }
    }

    private mutating func send(_ picked: PickedRequest) async -> Result<HTTPResponse, HTTPConnectionError> {
        let path = Self.paths[picked.path]
        var request = HTTPRequest(picked.method, path.target, query: path.query, headers: HTTPHeaders(picked.fields.map { ($0.name, $0.value) }))
        request.cachePolicy = picked.policy
        do {
            return .success(try await connections[picked.connection].send(request))
        } catch {
            return .failure(error)
        }
    }

    // MARK: - Picking

    private mutating func pick<T>(_ choices: [(Int, T)]) -> T {
        var roll = Int.random(in: 0..<choices.reduce(0) { $0 + $1.0 }, using: &random)
        for (weight, value) in choices {
            if roll < weight { return value }
            roll -= weight
        }
        return choices[choices.count - 1].1
    }

    private mutating func chance(_ percent: Int) -> Bool { Int.random(in: 0..<100, using: &random) < percent }

    private mutating func pickRequest() -> PickedRequest {
        var request = PickedRequest()
        request.connection = chance(30) ? 1 : 0
        request.path = pick([(45, 0), (25, 1), (15, 2), (15, 3)])
        request.method = pick([(78, .get), (12, .head), (4, .post), (3, .put), (2, .delete), (1, .patch)])
        if chance(50) { request.fields = users.randomElement(using: &random)! }
        if chance(60) { request.fields.append(("Accept-Language", chance(50) ? "en" : "fr")) }
        if chance(30) { request.fields.append(("Accept", chance(50) ? "text/plain" : "application/json")) }
        if let directive = pick([(82, nil), (8, "no-cache"), (5, "max-age=0"), (5, "no-store")] as [(Int, String?)]) {
            request.fields.append(("Cache-Control", directive))
        }
        if chance(12) {
            request.policy = pick([(1, .reloadIgnoringCache), (1, .reloadRevalidatingCache), (1, .returnCacheDataElseLoad),
                                   (1, .returnCacheDataDontLoad), (1, .useProtocolCachePolicy)] as [(Int, CachePolicy)])
        }
        return request
    }

    private mutating func pickResponse() -> PickedResponse {
        var response = PickedResponse()
        response.status = pick([(60, 200), (5, 203), (5, 204), (8, 301), (10, 404), (8, 500), (4, 503)])
        response.control.maxAge = pick([(30, nil), (10, 0), (20, 5), (20, 60), (20, 600)] as [(Int, Int?)])
        if chance(20) { response.control.sharedMaxAge = pick([(1, 0), (1, 30), (1, 300)]) }
        response.control.isPrivate = chance(15)
        response.control.isPublic = chance(20)
        response.control.noStore = chance(8)
        response.control.noCache = chance(10)
        response.control.mustRevalidate = chance(12)
        if chance(20) { response.expires = pick([(1, .after(-30)), (1, .after(0)), (1, .after(10)), (1, .after(120)), (1, .invalid)]) }
        if chance(35) { response.lastModifiedAgo = pick([(1, 0), (1, 40), (1, 600), (1, 20_000)]) }
        if chance(40) { response.etag = "\"e\(step)\"" }
        if chance(30) {
            response.vary = pick([(3, ["Accept-Language"]), (2, ["Accept-Language", "Accept"]), (2, ["Accept"]), (1, ["Cookie"]), (2, ["*"])])
        }
        if chance(15) { response.setCookie = "sid=s\(step); Path=/" }
        if response.etag == nil, response.lastModifiedAgo == nil, chance(15) { response.age = pick([(1, 0), (1, 5), (1, 100)]) }
        return response
    }

    /// The server's plan: the picked answer, and to a conditional request a `304` half the time,
    /// which may bring new directives (even `no-store` or `private`) or a cookie.
    private mutating func plan(_ response: PickedResponse, _ expected: Expected) -> TaggingServer.Plan {
        var plan = TaggingServer.Plan(status: response.status, headers: response.headers(date: clock.now))
        notModifiedControl = nil
        guard chance(50) else { return plan }
        var notModified = HTTPHeaders()
        if case .revalidate(let entry) = expected, let etag = entry.response.etag { notModified.set(etag, for: "ETag") }
        notModifiedControl = pick([(10, nil), (4, PickedDirectives(maxAge: 10)), (4, PickedDirectives(maxAge: 100)),
                                   (2, PickedDirectives(noCache: true)), (1, PickedDirectives(noStore: true)),
                                   (1, PickedDirectives(maxAge: 100, isPrivate: true)),
                                   (2, PickedDirectives(maxAge: 100, isPublic: true))] as [(Int, PickedDirectives?)])
        if let text = notModifiedControl?.text { notModified.set(text, for: "Cache-Control") }
        if chance(15) { notModified.set("sid=r\(step); Path=/", for: "Set-Cookie") }
        plan.notModified = notModified
        return plan
    }
}
