@testable import Courier
import CourierTestServer
import Foundation
import Synchronization
import Testing

/// Changes to one ``HTTPCache`` from two threads at once, as two connections sharing a cache make
/// them: a store reads a URL's variants and writes them back with its own, so an invalidation
/// that lands in between must not be undone.
@Suite("HTTP cache: changes from two threads at once", .ownThread, .serialized)
struct CacheConcurrentChangeTests {
    static let url = URL(string: "http://cache.test/a")!

    static func request(_ language: String) -> TransportRequest {
        TransportRequest(method: .get, url: url, headers: ["Accept-Language": language])
    }

    static func entry(_ language: String, round: Int) -> CachedResponse {
        let response = HTTPResponse(status: .ok, headers: ["Cache-Control": "max-age=100", "Vary": "Accept-Language"],
                                    body: Data("\(language) \(round)".utf8), url: url)
        return CachedResponse(response, request: request(language), requestTime: Date(), responseTime: Date())
    }

    /// Each round stores the French variant, then one thread stores the English one while another
    /// drops the URL (what a successful `POST` does). Whichever comes first, the French variant
    /// from before the drop must be gone afterwards. Before the cache held one lock across a
    /// store's read and write, the store could write the French variant back: in 4 runs, in memory
    /// in 3 to 74 of 3,000 rounds, on disk in 50 to 257 of 400.
    @Test("a response stored while a POST drops its URL never brings back a variant from before the POST", arguments: [false, true])
    func storeRacingInvalidation(onDisk: Bool) throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("courier-cache-race-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: directory) }
        let cache = HTTPCache(directory: onDisk ? directory : nil)
        #expect(cache.isPersistent == onDisk)
        let prepare = { (round: Int) in
            cache.removeAll()
            cache.store(Self.entry("fr", round: round), for: Self.request("fr"))
        }
        let store = { (round: Int) in cache.store(Self.entry("en", round: round), for: Self.request("en")) }
        let drop = { @Sendable (_: Int) in cache.invalidate(Self.url) }
        let race = TwoThreadRace(rounds: onDisk ? 400 : 3_000,
                                 span: TwoThreadRace.time(prepare: prepare, store) + TwoThreadRace.time(prepare: prepare, drop))
        var resurrected: [Int] = []
        race.run(prepare: prepare, first: store, second: drop) { round in
            if cache.lookup(Self.request("fr")) != nil { resurrected.append(round) }
        }
        #expect(race.completedRounds == race.rounds, "the two threads lost each other; rounds completed: \(race.completedRounds)")
        #expect(resurrected.isEmpty,
                "the French variant from before the drop came back in \(resurrected.count) of \(race.rounds) rounds (first: \(resurrected.prefix(5)))")
    }
}

/// Runs rounds in which two threads do one thing each at nearly the same moment: the calling
/// thread prepares the round, both threads leave a spinning barrier, one of them after a delay that
/// sweeps the operations' ``span`` in 200 steps (the first thread held back in even rounds, the
/// second in odd ones), and the calling thread checks the round once both are done. So a race
/// whose window is a few hundred nanoseconds wide is met in some round of every run, in a debug
/// build, a release build or under a sanitizer alike. Each wait spins for at most 10 seconds: a
/// thread that never comes ends the run (``completedRounds`` then falls short) instead of hanging it.
final class TwoThreadRace: @unchecked Sendable {
    // @unchecked: the closures run one round at a time, ordered by the atomics below.
    /// How many rounds to run.
    let rounds: Int
    /// How long the two operations take together: the range the delays sweep.
    let span: Duration
    private let started = Atomic<Int>(-1)
    private let finished = Atomic<Int>(-1)
    private let abandoned = Atomic<Bool>(false)
    /// The rounds run to their check.
    private(set) var completedRounds = 0

    init(rounds: Int, span: Duration) {
        self.rounds = rounds
        self.span = span
    }

    /// The median time `operation` takes on its own over 31 runs, each after `prepare`.
    static func time(prepare: (Int) -> Void, _ operation: (Int) -> Void) -> Duration {
        var times: [Duration] = []
        for round in 0..<31 {
            prepare(round)
            let start = ContinuousClock.now
            operation(round)
            times.append(ContinuousClock.now - start)
        }
        return times.sorted()[times.count / 2]
    }

    /// Runs every round; `second` runs on a thread of its own.
    func run(prepare: (Int) -> Void, first: (Int) -> Void, second: @escaping @Sendable (Int) -> Void, check: (Int) -> Void) {
        let other = Thread { [self] in
            for round in 0..<rounds {
                guard spin(until: { started.load(ordering: .acquiring) >= round }) else { return }
                if round % 2 == 1 { stagger(round) }
                second(round)
                finished.store(round, ordering: .releasing)
            }
        }
        other.start()
        defer { abandoned.store(true, ordering: .releasing) }
        for round in 0..<rounds {
            prepare(round)
            started.store(round, ordering: .releasing)
            if round % 2 == 0 { stagger(round) }
            first(round)
            guard spin(until: { finished.load(ordering: .acquiring) >= round }) else { return }
            check(round)
            completedRounds = round + 1
        }
    }

    /// Holds one thread back for the round's share of ``span``: step `(round / 2) % 200` of 200.
    private func stagger(_ round: Int) {
        let until = ContinuousClock.now + span * Double((round / 2) % 200) / 200
        while ContinuousClock.now < until {}
    }

    /// Spins until `condition` holds (`true`), for at most 10 seconds or until the run is abandoned.
    private func spin(until condition: () -> Bool) -> Bool {
        let deadline = ContinuousClock.now + .seconds(10)
        var spins = 0
        while !condition() {
            if abandoned.load(ordering: .acquiring) { return false }
            spins += 1
            // Let the other thread run when it shares this CPU (a loaded machine, a sanitizer).
            if spins % 64 == 0 { sched_yield() }
            if spins % 1024 == 0, ContinuousClock.now > deadline { return false }
        }
        return true
    }
}
