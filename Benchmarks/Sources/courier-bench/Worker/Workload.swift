import Foundation
import Synchronization

/// Sends a job's requests through a client from `concurrency` lanes (child tasks) until the
/// duration has passed or the count is reached, and keeps what each request took.
///
/// Each lane sends one request at a time; a shared ticket counter hands out request numbers,
/// so a counted run sends exactly `requestCount` requests. A watchdog cancels the lanes when
/// the job's time limit passes.
struct Workload: Sendable {
    /// What the lanes measured, merged.
    struct Outcome: Sendable {
        /// 2xx responses.
        var requests = 0
        /// Body bytes the 2xx responses moved, in the large-body scenarios (0 in the others).
        var bytes: Int64 = 0
        /// Failures and other statuses.
        var errors = 0
        /// Every request's latency in nanoseconds, when kept.
        var latencies: [UInt64] = []
        /// Responses served from the client's cache.
        var cacheHits = 0
        /// `VmRSS` in KiB after every ``WorkerJob/residentSampleInterval`` requests, by request number.
        var residentSamples: [(request: Int, kiB: Int)] = []
        /// The first error, in words.
        var firstError: String?
        /// Whether the time limit cut the run short.
        var timedOut = false
        /// The first response's `X-TLS` field.
        var tlsDescription: String?
        /// Responses whose `X-TLS` field says the session was resumed.
        var resumed = 0
        /// The protocol of the first response with an `X-Protocol` field, as the server saw it.
        var serverProtocol: String?
        /// The server's numbers of the connections the responses came on (`X-Protocol`'s second word).
        var connections: Set<String> = []

        mutating func merge(_ other: Outcome) {
            requests += other.requests
            bytes += other.bytes
            errors += other.errors
            latencies.append(contentsOf: other.latencies)
            cacheHits += other.cacheHits
            residentSamples.append(contentsOf: other.residentSamples)
            firstError = firstError ?? other.firstError
            tlsDescription = tlsDescription ?? other.tlsDescription
            resumed += other.resumed
            serverProtocol = serverProtocol ?? other.serverProtocol
            connections.formUnion(other.connections)
        }
    }

    /// Hands out request numbers to the lanes.
    private final class Tickets: Sendable {
        let next = Atomic<Int>(0)
    }

    var job: WorkerJob
    let client: any BenchClient
    let request: BenchRequest
    /// Present when the client needs help with 401s (the auth storm's peers).
    let coordinator: TokenCoordinator?

    /// Sends `job.warmupRequests` requests, unmeasured, from as many lanes as the run will use.
    func warmUp() async {
        guard job.warmupRequests > 0 else { return }
        var warmup = self
        warmup.job.requestCount = job.warmupRequests
        warmup.job.recordLatencies = false
        warmup.job.residentSampleInterval = nil
        _ = await warmup.runLanes(deadline: nil)
    }

    /// Runs the measured phase.
    func run() async -> Outcome {
        let deadline = job.isCounted ? nil : Nanoseconds.now() &+ UInt64(job.duration * 1e9)
        let work = Task { await runLanes(deadline: deadline) }
        let limit = job.timeLimit
        let watchdog = Task {
            try await Task.sleep(for: .seconds(limit))
            work.cancel()
        }
        var outcome = await work.value
        outcome.timedOut = !watchdog.isCancelled && work.isCancelled
        watchdog.cancel()
        outcome.residentSamples.sort { $0.request < $1.request }
        return outcome
    }

    private func runLanes(deadline: UInt64?) async -> Outcome {
        let tickets = Tickets()
        let lanes = max(1, min(job.concurrency, job.requestCount ?? Int.max))
        return await withTaskGroup(of: Outcome.self) { group in
            let executor = client.laneExecutor
            for _ in 0..<lanes {
                if let executor {
                    group.addTask(executorPreference: executor) { await lane(tickets: tickets, deadline: deadline) }
                } else {
                    // Not `addTask(executorPreference: nil)`: that still marks the task as having
                    // a preference, and every hop of it then takes the runtime's status lock.
                    group.addTask { await lane(tickets: tickets, deadline: deadline) }
                }
            }
            var total = Outcome()
            for await outcome in group { total.merge(outcome) }
            return total
        }
    }

    private func lane(tickets: Tickets, deadline: UInt64?) async -> Outcome {
        var outcome = Outcome()
        if job.recordLatencies { outcome.latencies.reserveCapacity(job.isCounted ? 16 : 1 << 16) }
        while !Task.isCancelled {
            let ticket = tickets.next.wrappingAdd(1, ordering: .relaxed).oldValue
            if let count = job.requestCount, ticket >= count { break }
            let start = Nanoseconds.now()
            if let deadline, start >= deadline { break }
            do {
                let response = if let coordinator {
                    try await coordinator.send(request)
                } else {
                    try await client.send(request)
                }
                if let expected = job.transferBytes, Int64(response.bodyBytes) != expected, (200..<300).contains(response.status) {
                    outcome.errors += 1
                    outcome.firstError = outcome.firstError ?? "moved \(response.bodyBytes) bytes, not \(expected)"
                } else if (200..<300).contains(response.status) {
                    outcome.requests += 1
                    if job.transfer != nil { outcome.bytes += Int64(response.bodyBytes) }
                } else {
                    outcome.errors += 1
                    outcome.firstError = outcome.firstError ?? "status \(response.status)"
                }
                if response.fromCache { outcome.cacheHits += 1 }
                if let seen = response.serverProtocol {
                    let words = seen.split(separator: " ")
                    outcome.serverProtocol = outcome.serverProtocol ?? words.first.map(String.init)
                    if let connection = words.last { outcome.connections.insert(String(connection)) }
                }
                if let tls = response.tls {
                    outcome.tlsDescription = outcome.tlsDescription ?? tls
                    if tls.hasSuffix(" r") { outcome.resumed += 1 }
                }
            } catch {
                outcome.errors += 1
                outcome.firstError = outcome.firstError ?? "\(error)"
            }
            if job.recordLatencies { outcome.latencies.append(Nanoseconds.now() &- start) }
            if let interval = job.residentSampleInterval, (ticket + 1) % interval == 0 {
                outcome.residentSamples.append((ticket + 1, ProcessStatus.current().residentKiB))
            }
        }
        return outcome
    }
}
