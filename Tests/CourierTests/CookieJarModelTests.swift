import Courier
import CourierTestServer
import Foundation
import Testing

/// The cookie jar against an independent model of RFC 6265 (``CookieModel``), without sockets:
/// seeded random responses with random `Set-Cookie` fields from random URLs, requests whose
/// `Cookie` field the model predicts exactly, and a clock that moves.
@Suite("Cookie jar model")
struct CookieJarModelTests {
    /// The hosts requests and responses use: parents and children, an IP address, a public
    /// suffix and a name below one, and one spelled in capitals.
    static let hosts = ["example.test", "a.example.test", "b.a.example.test", "other.test", "127.0.0.1",
                        "github.io", "u.github.io", "A.Example.TEST"]
    /// The request paths: empty, prefixes and near-prefixes of the cookies' paths.
    static let paths = ["", "/", "/docs", "/docs/", "/docs/a", "/docs/a/b", "/docsx", "/Docs/a", "/other/x", "/docs/a%20b"]
    /// When every jar's clock starts (2027).
    static let start = 1_800_000_000.0

    /// How a failure names the conversation, to replay it.
    static func hint(seed: UInt64, stream: Int) -> String {
        "seed 0x\(String(seed, radix: 16)) (replay with COURIER_TEST_SEED=0x\(String(seed, radix: 16))) stream \(stream)"
    }

    /// A random URL and what the model makes of it.
    static func place(using random: inout SeededRandom) -> (URL, CookieModel.Place) {
        let host = hosts.randomElement(using: &random)!
        let path = paths.randomElement(using: &random)!
        let https = Bool.random(using: &random)
        let port = [80, 443, 8080].randomElement(using: &random)!
        let query = Bool.random(using: &random) ? "?q=/x/y" : ""
        let url = URL(string: "\(https ? "https" : "http")://\(host):\(port)\(path)\(query)")!
        return (url, CookieModel.Place(host: host.lowercased(), path: path, https: https))
    }

    /// Plays `steps` random steps on `jar` and `model`; stops at the first difference, which it
    /// records with the steps that led to it. Returns whether they agreed all along.
    @discardableResult
    static func play(_ steps: Int, jar: CookieJar, model: inout CookieModel, clock: ManualDateClock,
                     using random: inout SeededRandom, hint: String) -> Bool {
        let generator = SetCookieGenerator()
        var log: [String] = []
        for step in 0..<steps {
            clock.advance(by: Double(Int.random(in: 1...120, using: &random)))
            let now = clock.secondsSince1970
            switch Int.random(in: 0..<20, using: &random) {
            case 0..<9:
                let (url, place) = place(using: &random)
                var headers = HTTPHeaders()
                let fields = (0..<Int.random(in: 1...3, using: &random)).map { _ in generator.make(now: now, using: &random) }
                for field in fields {
                    headers.add(field.line, for: "Set-Cookie")
                    model.receive(field, from: place, now: now)
                }
                jar.store(from: headers, for: url)
                log.append("\(step): \(url) set \(fields)")
            case 9..<19:
                let (url, place) = place(using: &random)
                let expected = model.header(for: place, now: now)
                let header = jar.cookieHeader(for: url)
                log.append("\(step): \(url) → \(header ?? "none")")
                guard header == expected else {
                    Issue.record("\(hint) step \(step): Cookie for \(url) is \(header ?? "none"), the model says \(expected ?? "none"); last steps:\n\(log.suffix(10).joined(separator: "\n"))")
                    return false
                }
            default:
                clock.advance(by: Double(86_400 * Int.random(in: 1...3, using: &random)))
                log.append("\(step): days pass")
            }
            if step % 10 == 9 {
                let stored = jar.cookies.map(CookieModel.summary(of:)).sorted()
                let predicted = model.summaries(at: clock.secondsSince1970)
                guard stored == predicted else {
                    let extra = stored.filter { !predicted.contains($0) }
                    let missing = predicted.filter { !stored.contains($0) }
                    Issue.record("\(hint) step \(step): the jar holds \(extra) beyond the model, lacks \(missing); last steps:\n\(log.suffix(10).joined(separator: "\n"))")
                    return false
                }
            }
        }
        return true
    }

    @Test("random Set-Cookie fields and requests: every Cookie field and every stored cookie is what RFC 6265 predicts")
    func randomConversations() {
        let seed = SeededRandom.seed()
        for stream in 0..<24 {
            var random = SeededRandom(seed: seed, stream: stream)
            let clock = ManualDateClock(start: Self.start)
            let jar = CookieJar(now: clock.now)
            var model = CookieModel()
            let hint = Self.hint(seed: seed, stream: stream)
            guard Self.play(200, jar: jar, model: &model, clock: clock, using: &random, hint: hint) else { return }
        }
    }

    @Test("persistence: a saved jar (mode 0600) reads back its persistent cookies only, and sends what the model predicts")
    func persistence() throws {
        let seed = SeededRandom.seed()
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("courier-jar-model-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: directory) }
        for stream in 0..<6 {
            var random = SeededRandom(seed: seed, stream: stream)
            let hint = Self.hint(seed: seed, stream: stream)
            let clock = ManualDateClock(start: Self.start)
            let file = CookieJar.File(directory: PrivateDirectory(url: directory), name: "jar-\(stream).json")
            let jar = try CookieJar(file: file, now: clock.now)
            var model = CookieModel()
            guard Self.play(120, jar: jar, model: &model, clock: clock, using: &random, hint: hint) else { return }
            try jar.save()
            let path = directory.appendingPathComponent(file.name).path
            let mode = try FileManager.default.attributesOfItem(atPath: path)[.posixPermissions] as? NSNumber
            #expect(mode?.intValue == 0o600, "\(hint)")
            // The file itself holds the persistent cookies only (reading it back drops the others too).
            let saved = try JSONSerialization.jsonObject(with: Data(contentsOf: URL(fileURLWithPath: path))) as? [String: Any]
            let persistent = model.summaries(at: clock.secondsSince1970, persistentOnly: true)
            #expect((saved?["cookies"] as? [Any])?.count == persistent.count, "\(hint): the file holds \(saved ?? [:])")
            clock.advance(by: 30)
            let reloaded = try CookieJar(file: file, now: clock.now)
            model.dropSessionCookies()
            let now = clock.secondsSince1970
            #expect(reloaded.cookies.map(CookieModel.summary(of:)).sorted() == model.summaries(at: now), "\(hint)")
            for host in Self.hosts {
                for requestPath in Self.paths {
                    for https in [false, true] {
                        let url = URL(string: "\(https ? "https" : "http")://\(host)\(requestPath)")!
                        let place = CookieModel.Place(host: host.lowercased(), path: requestPath, https: https)
                        let expected = model.header(for: place, now: now)
                        #expect(reloaded.cookieHeader(for: url) == expected, "\(hint): \(url)")
                    }
                }
            }
        }
    }

    @Test("limits: random stores and uses under small limits evict the least recently used, per domain and in all")
    func smallLimits() {
        let seed = SeededRandom.seed()
        for stream in 0..<10 {
            var random = SeededRandom(seed: seed, stream: stream)
            let hint = Self.hint(seed: seed, stream: stream)
            let clock = ManualDateClock(start: Self.start)
            let jar = CookieJar(limits: .init(perDomain: 4, total: 20), now: clock.now)
            var model = CookieModel()
            (model.perDomain, model.total) = (4, 20)
            for step in 0..<300 {
                // One cookie per host and path, each request meets at most one: no two cookies
                // are ever used at the same instant, so the least recently used is always one.
                clock.advance(by: 1)
                let now = clock.secondsSince1970
                let host = "h\(Int.random(in: 0..<8, using: &random)).example.test"
                let slot = Int.random(in: 0..<8, using: &random)
                let url = URL(string: "https://\(host)/p\(slot)")!
                let place = CookieModel.Place(host: host, path: "/p\(slot)", https: true)
                if Bool.random(using: &random) {
                    let line = "n\(slot)=\(step); Path=/p\(slot)"
                    model.receive(ModelSetCookie(line: line, pair: ("n\(slot)", "\(step)"), attributes: [.path("/p\(slot)")]),
                                  from: place, now: now)
                    jar.store(from: ["Set-Cookie": line], for: url)
                } else {
                    let expected = model.header(for: place, now: now)
                    guard jar.cookieHeader(for: url) == expected else {
                        Issue.record("\(hint) step \(step): \(url) gets \(jar.cookieHeader(for: url) ?? "none"), the model says \(expected ?? "none")")
                        return
                    }
                }
                let stored = jar.cookies.map(CookieModel.summary(of:)).sorted()
                guard stored == model.summaries(at: now) else {
                    Issue.record("\(hint) step \(step): the jar holds \(stored), the model \(model.summaries(at: now))")
                    return
                }
            }
        }
    }

    @Test("the default limits: 50 cookies per domain and 3000 in all, the least recently used going first")
    func defaultLimits() {
        let clock = ManualDateClock(start: Self.start)
        let jar = CookieJar(now: clock.now)
        func set(_ domain: Int, _ slot: Int) {
            clock.advance(by: 1)
            jar.store(from: ["Set-Cookie": "c\(slot)=1; Path=/p\(slot)"], for: URL(string: "https://d\(domain).test/")!)
        }
        for domain in 0..<60 {
            for slot in 0..<50 { set(domain, slot) }
        }
        #expect(jar.cookies.count == 3_000)
        set(0, 50)
        #expect(jar.cookies.count == 3_000)
        #expect(jar.cookies.filter { $0.domain == "d0.test" }.map(\.name).sorted() == (1...50).map { "c\($0)" }.sorted(),
                "the 51st cookie of d0.test pushed out its least recently used")
        clock.advance(by: 1)
        #expect(jar.cookieHeader(for: URL(string: "https://d0.test/p1")!) == "c1=1")
        set(60, 0)
        #expect(jar.cookies.count == 3_000)
        let d0 = Set(jar.cookies.filter { $0.domain == "d0.test" }.map(\.name))
        #expect(d0 == Set(([1] + Array(3...50)).map { "c\($0)" }),
                "the 3001st cookie pushed out the least recently used of all, d0.test's c2 (c1 was just sent)")
    }
}
