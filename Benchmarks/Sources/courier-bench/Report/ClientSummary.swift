/// One client's results in one scenario, summarised over its rounds: medians for rates,
/// latencies and CPU; the highest peaks; the sums of errors.
struct ClientSummary: Sendable {
    /// The client.
    let client: ClientKind
    /// The row's name.
    let label: String
    /// One result per round that produced one.
    var results: [WorkerResult] = []
    /// Why rounds produced no result (a crash, a timeout, a missing tool).
    var failures: [String] = []

    /// Median requests per second.
    var requestsPerSecond: Double? { median(\.requestsPerSecond) }
    /// Median of the rounds' median latencies.
    var latencyP50: Double? { median { $0.latencyP50 } }
    /// Median of the rounds' 99th percentile latencies.
    var latencyP99: Double? { median { $0.latencyP99 } }
    /// Median body bytes moved per second (the large-body scenarios).
    var bytesPerSecond: Double? { median(\.bytesPerSecond) }
    /// Median CPU seconds per GiB of body moved.
    var cpuPerGiB: Double? { median { $0.bytes > 0 ? $0.cpuSeconds / (Double($0.bytes) / Double(1 << 30)) : nil } }
    /// Median resident memory as the measured phase started, in KiB.
    var startResidentKiB: Double? { median { Double($0.startResidentKiB) } }
    /// The most resident memory grew in any round, from the start of its measured phase to its
    /// peak, in KiB.
    var peakGrowthKiB: Int? { results.map { $0.peakResidentKiB - $0.startResidentKiB }.max() }
    /// Median CPU seconds per request.
    var cpuPerRequest: Double? { median { $0.cpuPerRequest } }
    /// Median context switches per request.
    var switchesPerRequest: Double? { median { $0.switchesPerRequest } }
    /// Median wall-clock seconds of the measured phase.
    var elapsed: Double? { median(\.elapsed) }
    /// The highest peak resident memory of any round, in KiB.
    var peakResidentKiB: Int? { results.map(\.peakResidentKiB).max() }
    /// Resident memory per request in flight, in KiB: the round's peak over its resident memory
    /// as the measured phase started, divided by `inFlight`; the highest of any round.
    func residentGrowthKiB(perRequestOf inFlight: Int) -> Double? {
        guard inFlight > 0 else { return nil }
        return results.map { Double($0.peakResidentKiB - $0.startResidentKiB) / Double(inFlight) }.max()
    }
    /// The most threads of any round.
    var peakThreads: Int? { results.map(\.peakThreads).max() }
    /// Failed requests over every round.
    var errors: Int { results.map(\.errors).reduce(0, +) }
    /// The most requests one round completed.
    var requests: Int? { results.map(\.requests).max() }
    /// Requests that reached the server, per round (the coalescing scenario).
    var serverRequests: [Int] { results.compactMap(\.serverRequests) }
    /// Token requests per round.
    var tokenRequests: [Int] { results.compactMap(\.tokenRequests) }
    /// The share of responses that came from the cache, over every round.
    var cacheHitFraction: Double? {
        let total = results.map(\.requests).reduce(0, +)
        return total > 0 ? Double(results.map(\.cacheHits).reduce(0, +)) / Double(total) : nil
    }
    /// The server's account of the first TLS connection: protocol, cipher, resumed (`r`) or not (`.`).
    var tlsDescription: String? { results.lazy.compactMap(\.tlsDescription).first }
    /// The protocol the server saw (e.g. `HTTP/2.0`), from the first round that reported one.
    var protocolDescription: String? { results.lazy.compactMap(\.protocolDescription).first }
    /// The most connections any round's measured requests came on, as the server saw them.
    var connections: Int? { results.compactMap(\.connections).max() }
    /// The share of responses whose connection resumed a TLS session, over every round.
    var resumedFraction: Double? {
        let total = results.map(\.requests).reduce(0, +)
        return total > 0 ? Double(results.map(\.resumedResponses).reduce(0, +)) / Double(total) : nil
    }
    /// Whether any round hit its time limit.
    var timedOut: Bool { results.contains(where: \.timedOut) }
    /// The first error any round saw.
    var firstError: String? { results.lazy.compactMap(\.firstError).first ?? failures.first }

    /// The resident memory samples of the first round, in KiB.
    var residentSamples: [Int] { results.first?.residentSamplesKiB ?? [] }
    /// Resident memory growth from the first sample to the last, in KiB.
    var residentGrowthKiB: Int? {
        guard let first = residentSamples.first, let last = residentSamples.last, residentSamples.count > 1 else { return nil }
        return last - first
    }
    /// Flat means the memory grew by at most 2 MiB from the first sample to the last.
    var residentIsFlat: Bool? { residentGrowthKiB.map { $0 <= 2048 } }

    private func median(_ value: (WorkerResult) -> Double?) -> Double? {
        Statistics.median(results.compactMap(value))
    }
}
