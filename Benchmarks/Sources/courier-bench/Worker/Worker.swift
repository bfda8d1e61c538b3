import Foundation

/// The worker side of `courier-bench`: runs one ``WorkerJob`` in this process and writes its
/// ``WorkerResult`` to the job's result file.
enum Worker {
    /// Runs the job given as JSON after ``WorkerJob/argument``.
    /// - Returns: the process exit status: 0 when the result was written.
    static func main(jobJSON: String) async -> Int32 {
        do {
            let job = try JSONDecoder().decode(WorkerJob.self, from: Data(jobJSON.utf8))
            let result = try await run(job)
            try JSONEncoder().encode(result).write(to: URL(fileURLWithPath: job.resultPath))
            return 0
        } catch {
            FileHandle.standardError.write(Data("courier-bench worker: \(error)\n".utf8))
            return 1
        }
    }

    /// Warms the client up, then measures the job.
    static func run(_ job: WorkerJob) async throws -> WorkerResult {
        FileDescriptorLimit.raiseToMaximum()
        guard let url = URL(string: job.url) else { throw BenchError("bad URL \(job.url)") }
        let client = try ClientFactory.make(for: job)
        var coordinator: TokenCoordinator?
        if let auth = job.auth, !client.handlesAuthentication, let tokenURL = URL(string: auth.tokenURL) {
            coordinator = TokenCoordinator(client: client, tokenURL: tokenURL)
        }
        let headers = job.newConnectionPerRequest ? [("Connection", "close")] : []
        var request = BenchRequest(method: job.method, url: url, headers: headers, body: jsonBody(bytes: job.bodyBytes))
        request.transfer = try transfer(of: job)
        let workload = Workload(job: job, client: client, request: request, coordinator: coordinator)
        await workload.warmUp()
        if let warmup = job.warmupURL.flatMap(URL.init(string:)) {
            _ = try await client.send(BenchRequest(method: "GET", url: warmup))
        }
        let tokensBefore = try await tokensIssued(job, client)
        let servedBefore = try await serverCount(job.serverCountURL, field: "requests", client)

        let residentBefore = ProcessStatus.current().residentKiB
        let monitor = ResourceMonitor()
        let usageBefore = ProcessStatus.usage()
        let start = Nanoseconds.now()
        let outcome = await workload.run()
        let elapsed = Nanoseconds.seconds(since: start)
        let usageAfter = ProcessStatus.usage()
        let cpu = usageAfter.totalCPUSeconds - usageBefore.totalCPUSeconds
        let switches = usageAfter.contextSwitches - usageBefore.contextSwitches
        let peaks = monitor.stop()

        var result = WorkerResult()
        result.requests = outcome.requests
        result.bytes = outcome.bytes
        result.errors = outcome.errors
        result.elapsed = elapsed
        result.cpuSeconds = cpu
        result.contextSwitches = switches
        result.peakThreads = peaks.threads
        result.peakResidentKiB = ProcessStatus.current().peakResidentKiB
        result.startResidentKiB = residentBefore
        result.residentSamplesKiB = outcome.residentSamples.map(\.kiB)
        result.cacheHits = outcome.cacheHits
        result.timedOut = outcome.timedOut
        result.firstError = outcome.firstError
        result.tlsDescription = outcome.tlsDescription
        result.resumedResponses = outcome.resumed
        result.protocolDescription = outcome.serverProtocol
        result.connections = outcome.connections.isEmpty ? nil : outcome.connections.count
        let sorted = outcome.latencies.sorted()
        result.latencyP50 = Statistics.percentile(0.5, ofSorted: sorted).map { Double($0) / 1e9 }
        result.latencyP99 = Statistics.percentile(0.99, ofSorted: sorted).map { Double($0) / 1e9 }
        if let before = tokensBefore, let after = try await tokensIssued(job, client) {
            result.tokenRequests = after - before
        }
        if let before = servedBefore, let after = try await serverCount(job.serverCountURL, field: "requests", client) {
            result.serverRequests = after - before
        }
        await client.shutdown()
        if let problem = checkTransferredFile(job) {
            result.errors += result.requests
            result.requests = 0
            result.firstError = result.firstError ?? problem
        }
        return result
    }

    /// How the job's body moves, with its file.
    private static func transfer(of job: WorkerJob) throws -> BenchTransfer {
        guard let transfer = job.transfer else { return .collect }
        if transfer == .stream { return .stream }
        guard let path = job.transferFile, let bytes = job.transferBytes else {
            throw BenchError("a \(transfer.rawValue) job needs a file and a size")
        }
        let file = URL(fileURLWithPath: path)
        return transfer == .downloadToFile ? .downloadToFile(file) : .uploadFromFile(file, bytes: bytes)
    }

    /// After a download or an upload, checks that the file written (by the client, or by nginx
    /// for an upload) has the expected size, then deletes it; the problem in words, if any.
    private static func checkTransferredFile(_ job: WorkerJob) -> String? {
        let written: String? = switch job.transfer {
        case .downloadToFile: job.transferFile
        case .uploadFromFile: job.storedUploadFile
        case .stream, nil: nil
        }
        guard let written, let expected = job.transferBytes else { return nil }
        defer { try? FileManager.default.removeItem(atPath: written) }
        let size = (try? FileManager.default.attributesOfItem(atPath: written)[.size] as? Int64) ?? nil
        guard let size else { return "\(written) was not written" }
        return size == expected ? nil : "\(written) holds \(size) bytes, not \(expected)"
    }

    /// A JSON document of exactly `bytes` bytes (`{"data":"xxx…"}`), or nothing for 0.
    static func jsonBody(bytes: Int) -> Data {
        guard bytes > 0 else { return Data() }
        let padding = max(bytes - #"{"data":""}"#.utf8.count, 0)
        return Data((#"{"data":""# + String(repeating: "x", count: padding) + #""}"#).utf8)
    }

    /// The server's count of issued tokens, when the job has a token endpoint.
    private static func tokensIssued(_ job: WorkerJob, _ client: any BenchClient) async throws -> Int? {
        try await serverCount(job.auth?.statsURL, field: "tokens", client)
    }

    /// The number in `field` of the JSON object a GET of `url` answers; `nil` without a URL.
    private static func serverCount(_ url: String?, field: String, _ client: any BenchClient) async throws -> Int? {
        guard let url = url.flatMap(URL.init(string:)) else { return nil }
        let response = try await client.send(BenchRequest(method: "GET", url: url, keepsBody: true))
        guard let body = response.body,
              let object = try JSONSerialization.jsonObject(with: body) as? [String: Any] else { return nil }
        return object[field] as? Int
    }
}
