@testable import Courier
import Foundation

/// The model's store, its predictions, and the properties checked after each step.
extension CacheConversation {
    typealias Exchange = TaggingServer.Exchange

    func key(_ request: PickedRequest) -> ModelKey {
        ModelKey(path: request.path, identity: request.identity, carriesCredential: request.carriesCredential)
    }

    // MARK: - Predicting

    /// What the cache should do with the request, by its policy and the model's store.
    func predict(_ request: PickedRequest) -> Expected {
        if request.isUnsafe { return .unsafe }
        let policy = request.effectivePolicy
        let stored = policy == .reloadIgnoringCache || request.noStore ? nil : entries[key(request)]?.first { $0.matches(request) }
        switch policy {
        case .returnCacheDataDontLoad:
            return stored.map(Expected.hit) ?? .notCached
        case .returnCacheDataElseLoad:
            return stored.map(Expected.hit) ?? .load
        case .reloadRevalidatingCache:
            if let stored, stored.hasValidator { return .revalidate(stored) }
        case .useProtocolCachePolicy:
            if let stored, !request.wantsValidation, !stored.control.noCache, stored.isFresh(now: clock.now, shared: shared) {
                return .hit(stored)
            }
            if let stored, stored.hasValidator { return .revalidate(stored) }
        case .reloadIgnoringCache:
            break
        }
        return .load
    }

    /// Whether ``HTTPCache``'s documented rules let it keep the answer to `request`.
    func mayStore(_ entry: ModelEntry, for request: PickedRequest) -> Bool {
        let response = entry.response
        return request.method == .get && PickedResponse.storableStatuses.contains(response.status)
            && !response.control.noStore && !request.noStore && !(shared && response.control.isPrivate)
            && (!request.carriesCredential || response.control.allowCredentialed(shared: shared))
            && !response.vary.contains("*") && (entry.lifetime(shared: shared) > 0 || entry.hasValidator)
    }

    /// Whether an entry whose directives a `304` replaced may stay: the storing rules apply to
    /// the response as updated (no `no-store`, no `private` in a shared cache, explicit
    /// permission for a credentialed request).
    func mayKeep(_ control: PickedDirectives, for request: PickedRequest) -> Bool {
        !control.noStore && !(shared && control.isPrivate) && (!request.carriesCredential || control.allowCredentialed(shared: shared))
    }

    /// Keeps one variant per set of `Vary` values, newest first, at most 8.
    mutating func store(_ entry: ModelEntry, for request: PickedRequest) {
        var variants = (entries[key(request)] ?? []).filter { $0.varyValues != entry.varyValues }
        variants.insert(entry, at: 0)
        entries[key(request)] = Array(variants.prefix(8))
        statistics.stores += 1
    }

    /// Takes the step's outcome into the model's store and statistics.
    mutating func update(_ request: PickedRequest, _ expected: Expected, _ response: PickedResponse, _ exchanges: [Exchange]) {
        switch expected {
        case .hit:
            statistics.hits += 1
        case .notCached:
            statistics.misses += 1
        case .unsafe:
            if let exchange = exchanges.first, (200..<400).contains(exchange.response.status.code) {
                entries = entries.filter { $0.key.path != request.path }
                invalidatedAt[request.path] = step
                coverage.invalidations += 1
            }
        case .revalidate(var entry) where exchanges.first?.response.status.code == 304:
            statistics.revalidations += 1
            if let notModifiedControl { entry.control = notModifiedControl }
            entry.date = clock.now
            if mayKeep(entry.control, for: request) {
                store(entry, for: request)
            } else {
                entries[key(request)]?.removeAll { $0.varyValues == entry.varyValues }
            }
        case .load, .revalidate:
            statistics.misses += 1
            guard let exchange = exchanges.first else { return }
            let entry = ModelEntry(tag: exchange.tag, response: response, body: exchange.response.body, request: request, date: clock.now)
            if mayStore(entry, for: request) { store(entry, for: request) }
        }
    }

    // MARK: - Checking

    mutating func fail(_ property: String, _ detail: String) {
        failures.append("\(property): \(detail)")
    }

    /// Checks the answer to one request against the properties a user and a security reviewer
    /// expect, and against the model's prediction.
    mutating func checkAnswer(_ request: PickedRequest, _ expected: Expected, _ result: Result<HTTPResponse, HTTPConnectionError>,
                              _ exchanges: [Exchange]) {
        if exchanges.count > 1 { fail("a request asks the server at most once", "\(exchanges.count) exchanges") }
        switch result {
        case .failure(let error):
            if case .notCached = expected, error == .notCached, exchanges.isEmpty {
                coverage.notCached += 1
            } else {
                fail("a request fails only with notCached, when its policy forbids loading and nothing usable is stored", "\(error)")
            }
        case .success(let answer):
            let outcome: CacheOutcome? = switch answer.source {
            case .cache: .hit
            case .revalidatedCache: .revalidated
            case .network: request.isUnsafe ? nil : .miss
            }
            if answer.metrics?.cache != outcome {
                fail("the answer's metrics name what the cache did", "\(answer.metrics?.cache.map { "\($0)" } ?? "nil") for \(answer.source)")
            }
        }
        switch result {
        case .failure: break
        case .success(let answer) where answer.source == .network:
            checkNetworkAnswer(expected, answer, exchanges)
        case .success(let answer):
            checkCachedAnswer(request, expected, answer, exchanges)
        }
    }

    private mutating func checkNetworkAnswer(_ expected: Expected, _ answer: HTTPResponse, _ exchanges: [Exchange]) {
        guard let exchange = exchanges.first else { return fail("an answer from the network is the server's answer", "the server was not asked") }
        if answer.headers["X-Tag"] != exchange.tag || exchange.response.status.code == 304 || answer.body != exchange.response.body {
            fail("an answer from the network is the server's answer", "got \(answer.headers["X-Tag"] ?? "no tag"), server sent \(describe(exchange))")
        }
        switch expected {
        case .hit(let entry):
            fail("a stored entry the policy lets the cache use answers without the server", "expected \(entry.tag) from the cache")
        case .notCached:
            fail("returnCacheDataDontLoad never asks the server", describe(exchange))
        case .revalidate(let entry):
            checkConditional(entry, exchange)
        case .load, .unsafe:
            if exchange.isConditional { fail("a request with nothing usable stored goes out unconditional", describe(exchange)) }
        }
    }

    private mutating func checkConditional(_ entry: ModelEntry, _ exchange: Exchange) {
        let sent = exchange.request.headers
        if sent["If-None-Match"] != entry.response.etag || sent["If-Modified-Since"] != entry.lastModifiedText {
            fail("a stale entry with a validator is revalidated with its own validators",
                 "entry \(entry.tag) has ETag \(entry.response.etag ?? "-"), Last-Modified \(entry.lastModifiedText ?? "-"); "
                 + "sent If-None-Match \(sent["If-None-Match"] ?? "-"), If-Modified-Since \(sent["If-Modified-Since"] ?? "-")")
        }
    }

    private mutating func checkCachedAnswer(_ request: PickedRequest, _ expected: Expected, _ answer: HTTPResponse, _ exchanges: [Exchange]) {
        guard let tag = answer.headers["X-Tag"], let origin = sent[tag] else {
            return fail("an answer from the cache is one the server sent", "tag \(answer.headers["X-Tag"] ?? "none")")
        }
        checkSecurity(request, answer, origin)
        // The stored `Cache-Control` as the answer shows it: from the cache, or revalidated by a 304 without one.
        if answer.source == .cache || exchanges.first?.response.headers.contains("Cache-Control") == false {
            checkStoredDirectives(request, answer.headers["Cache-Control"])
        }
        let entry = entries[key(request)]?.first { $0.tag == tag }
        if answer.source == .cache {
            if !exchanges.isEmpty { fail("an answer from the cache does not ask the server", exchanges.map(describe).joined(separator: ", ")) }
            if request.effectivePolicy == .useProtocolCachePolicy, let entry,
               !entry.isFresh(now: clock.now, shared: shared) || entry.control.noCache || request.wantsValidation {
                fail("with the default policy, an entry answers without the server only while fresh, not no-cache, and not refused by the request",
                     "\(tag): lifetime \(entry.lifetime(shared: shared)) s, age \(clock.now.timeIntervalSince(entry.date)) s, "
                     + "Cache-Control \(entry.control.text ?? "-"), request \(request.value("Cache-Control"))")
            }
        } else if let exchange = exchanges.first, exchange.response.status.code == 304, answer.headers["X-Revalidation"] == exchange.tag {
            if let entry { checkConditional(entry, exchange) }
        } else {
            fail("an answer revalidated from the cache follows the server's 304 to this request", exchanges.map(describe).joined(separator: ", "))
        }
        guard entry != nil else {
            return fail("the cache serves only what the model holds for the URL and partition (stored under the rules, not invalidated)",
                        "served \(tag)")
        }
        switch (expected, answer.source) {
        case (.hit(let predicted), .cache) where predicted.tag == tag: coverage.hits += 1
        case (.revalidate(let predicted), .revalidatedCache) where predicted.tag == tag: coverage.revalidations += 1
        default: return fail("the cache answers as the model predicts", "expected \(describe(expected)), got \(answer.source) \(tag)")
        }
        if request.carriesCredential { coverage.credentialedHits += 1 }
        if !origin.response.vary.isEmpty { coverage.variedHits += 1 }
    }

    /// What must hold of any answer from the cache, whatever the model's store says.
    private mutating func checkSecurity(_ request: PickedRequest, _ answer: HTTPResponse, _ origin: Sent) {
        let response = origin.response
        if origin.request.path != request.path {
            fail("a cached answer is one for the URL asked", "stored for \(Self.paths[origin.request.path].target)")
        }
        if origin.request.identity != request.identity {
            fail("a cached answer was produced for exactly the same credentials and default headers",
                 "stored for \(origin.request.identity), asked with \(request.identity)")
        }
        if origin.request.carriesCredential, !response.control.allowCredentialed(shared: shared) {
            fail("a response to a credentialed request is stored only when Cache-Control allows it explicitly",
                 "Cache-Control \(response.control.text ?? "-")")
        }
        if shared, response.control.isPrivate { fail("a shared cache never serves a private response", response.control.text ?? "") }
        if response.control.noStore || origin.request.noStore || request.noStore {
            fail("nothing no-store, in the response or either request, is served from the cache",
                 "response \(response.control.text ?? "-"), stored request \(origin.request.value("Cache-Control")), this request \(request.value("Cache-Control"))")
        }
        if answer.headers.contains("Set-Cookie") { fail("Set-Cookie never appears in an answer from the cache", answer.headers["Set-Cookie"] ?? "") }
        if response.vary.contains("*") {
            fail("a response with Vary: * is never served from the cache", "")
        } else if request.varyValues(response.vary) != origin.request.varyValues(response.vary) {
            fail("a cached answer's Vary fields had the same values in its request as in this one",
                 "stored for \(origin.request.varyValues(response.vary)), asked with \(request.varyValues(response.vary))")
        }
        if let invalidated = invalidatedAt[request.path], origin.step <= invalidated {
            fail("after a successful unsafe request on a URL, nothing stored before it is served for that URL",
                 "stored at step \(origin.step), invalidated at step \(invalidated)")
        }
        if origin.request.method != .get || answer.status.code != response.status {
            fail("a cached answer is a stored GET answer, with its status", "\(origin.request.method) → \(answer.status.code)")
        }
        if answer.body != (request.method == .head ? Data() : origin.body) {
            fail("a cached answer carries the stored body (none for HEAD)", "\(answer.body.count) bytes")
        }
    }

    /// What the stored answer's own `Cache-Control` (as 304s updated it) must allow.
    private mutating func checkStoredDirectives(_ request: PickedRequest, _ control: String?) {
        let names = PickedDirectives.names(control)
        if names.contains("no-store") {
            fail("nothing no-store, in the response or either request, is served from the cache", "the stored answer says \(control ?? "-")")
        }
        if shared, names.contains("private") { fail("a shared cache never serves a private response", "the stored answer says \(control ?? "-")") }
        if request.carriesCredential, names.isDisjoint(with: ["public", "must-revalidate"]), !(shared && names.contains("s-maxage")) {
            fail("a response to a credentialed request is stored only when Cache-Control allows it explicitly",
                 "the stored answer says \(control ?? "-")")
        }
    }

    /// After a request went to the server, the variant the cache finds for it is the one the
    /// model holds: the answer stored when the rules allow, the old entry kept when they do not,
    /// a revalidated entry kept unless the `304` made it one the rules forbid storing.
    mutating func checkStore(_ request: PickedRequest, _ exchanges: [Exchange]) {
        guard let exchange = exchanges.first, !request.isUnsafe else { return }
        var seen = exchange.request  // the request as the cache saw it, before it added conditions
        seen.headers.remove("If-None-Match")
        seen.headers.remove("If-Modified-Since")
        let held = cache.lookup(seen).map { $0.httpHeaders["X-Tag"] ?? "?" }
        let modelled = entries[key(request)]?.first { $0.matches(request) }?.tag
        guard held != modelled else { return }
        let property = exchange.response.status.code == 304
            ? "a 304 whose Cache-Control forbids storing (no-store, private in a shared cache, no explicit permission for a credential) drops the entry it revalidated"
            : "after an answer from the server, the cache holds for the request what the storing rules allow"
        fail(property, "the cache holds \(held ?? "nothing"), the model \(modelled ?? "nothing")")
    }

    mutating func checkStatistics() {
        if cache.statistics != statistics {
            fail("the cache's statistics count what it did", "cache \(cache.statistics), model \(statistics)")
        }
    }

    /// Only answers to requests without credentials, for URLs without secrets, reach the disk:
    /// no file there holds a credential or the secret query parameter.
    mutating func checkDisk() {
        guard let directory, let files = try? FileManager.default.contentsOfDirectory(at: directory, includingPropertiesForKeys: nil) else { return }
        for file in files {
            let text = String(decoding: (try? Data(contentsOf: file)) ?? Data(), as: UTF8.self)
            // Markers that base64 (bodies are stored so) cannot produce: a space, `=` inside, `-`.
            for secret in ["Bearer ", "session=", "x-api-key", "X-API-Key", "token="] where text.contains(secret) {
                fail("only answers to requests without credentials, for URLs without secrets, are written to disk", "\(file.lastPathComponent) holds \(secret)")
            }
        }
    }

    // MARK: - Describing

    func describe(_ request: PickedRequest) -> String {
        let fields = request.allFields.map { "\($0.name): \($0.value)" }.joined(separator: "; ")
        return "conn\(request.connection) \(request.method) \(Self.paths[request.path].target) [\(fields)]"
            + (request.policy.map { " \($0)" } ?? "")
    }

    func describe(_ expected: Expected) -> String {
        switch expected {
        case .hit(let entry): "hit \(entry.tag)"
        case .revalidate(let entry): "revalidate \(entry.tag)"
        case .load: "load"
        case .notCached: "notCached"
        case .unsafe: "unsafe"
        }
    }

    func describe(_ result: Result<HTTPResponse, HTTPConnectionError>) -> String {
        switch result {
        case .success(let answer): "\(answer.source) \(answer.headers["X-Tag"] ?? "?") \(answer.status.code)"
        case .failure(let error): "error \(error.kindName)"
        }
    }

    func describe(_ exchange: Exchange) -> String {
        let conditions = ["If-None-Match", "If-Modified-Since"].compactMap { name in exchange.request.headers[name].map { "\(name): \($0)" } }
        let fields = exchange.response.headers.fields.filter { $0.name != "X-Tag" && $0.name != "Date" }.map { "\($0.name): \($0.value)" }
        return "\(exchange.tag) \(exchange.request.method)\(conditions.isEmpty ? "" : " \(conditions)") → \(exchange.response.status.code) \(fields)"
    }
}
