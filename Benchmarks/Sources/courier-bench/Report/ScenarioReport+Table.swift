/// The table of each kind of scenario.
extension ScenarioReport {
    /// The report as a table.
    func table() -> Table {
        var table: Table
        switch scenario.kind {
        case .throughput, .cache: table = throughputTable()
        case .pipeline: table = pipelineTable()
        case .authStorm: table = authStormTable()
        case .soak: table = soakTable()
        case .slowServer: table = slowServerTable()
        case .largeBody: table = largeBodyTable()
        case .coalescing: table = coalescingTable()
        }
        table.subtitle.insert("Server: \(serverDescription).", at: 0)
        for summary in summaries where summary.results.isEmpty {
            table.notes.append("- \(summary.label): no result (\(summary.failures.first ?? "not run")).")
        }
        for summary in summaries where !summary.results.isEmpty && summary.errors > 0 {
            table.notes.append("- \(summary.label): \(summary.errors) failed requests; first: \(summary.firstError ?? "?").")
        }
        return table
    }

    var measured: [ClientSummary] { summaries.filter { !$0.results.isEmpty } }

    private func throughputTable() -> Table {
        let ceiling = scenario.ceiling
        let wrk = summary(ceiling)?.requestsPerSecond
        let ahc = summary(.asyncHTTPClient)?.requestsPerSecond
        var header = ["client", "req/s", "p50", "p99", "CPU/req", "switches/req", "peak RSS"]
        if scenario.kind == .cache { header.append("from cache") }
        let tls = measured.contains { $0.tlsDescription != nil }
        if tls { header += ["TLS (server's view)", "resumed"] }
        let protocols = scenario.server == .http2
        if protocols { header += ["protocol (server's view)", "connections"] }
        if wrk != nil { header.append("× \(ceiling.title)") }
        if ahc != nil { header.append("× AHC") }
        var table = Table(title: scenario.title, header: header)
        table.subtitle.append(settings)
        for summary in measured {
            let rate = summary.requestsPerSecond
            var row = [summary.label, Format.rate(rate), Format.duration(summary.latencyP50),
                       Format.duration(summary.latencyP99), Format.duration(summary.cpuPerRequest),
                       Format.perRequest(summary.switchesPerRequest), Format.memory(kiB: summary.peakResidentKiB)]
            if scenario.kind == .cache { row.append(Format.percent(summary.cacheHitFraction)) }
            if tls {
                let described = summary.tlsDescription.map { String($0.split(separator: " ").prefix(2).joined(separator: " ")) }
                row += [described ?? "–", summary.tlsDescription == nil ? "–" : Format.percent(summary.resumedFraction)]
            }
            if protocols { row += [summary.protocolDescription ?? "–", summary.connections.map(String.init) ?? "–"] }
            if let wrk { row.append(Format.ratio(rate.map { $0 / wrk })) }
            if let ahc { row.append(Format.ratio(rate.map { $0 / ahc })) }
            table.rows.append(row)
        }
        if tls {
            table.notes.append("- TLS and resumed come from nginx (`$ssl_protocol $ssl_cipher $ssl_session_reused` in a response field); \(ceiling.title) does not read it (–).")
        }
        if protocols {
            table.notes.append("- Protocol and connections come from nginx (`$server_protocol $connection` in a response field): the HTTP version of the requests and how many connections the measured requests came on. h2load does not read it: its row shows the protocol it negotiated by ALPN and its one connection (`-c1`).")
        }
        table.notes.append("- switches/req: the client's context switches (voluntary and involuntary, every thread) per request; each is a thread going to sleep or being preempted, and waking one costs another thread CPU. wrk's and h2load's count their whole run.")
        if scenario.kind == .cache {
            table.notes.append("- \"from cache\" counts responses the client says it served without the network; URLSession does not say (–).")
        }
        return table
    }

    private func pipelineTable() -> Table {
        var table = Table(title: scenario.title,
                          header: ["client", "req/s", "p50", "p99", "CPU/req", "peak RSS", "time over bare", "CPU over bare"])
        table.subtitle.append(settings)
        table.subtitle.append("Full pipeline: a delegate, `.exponentialBackoff()` retries, a bearer authenticator with a known credential, cache off. " +
                              "The delegate implements no method (after the first request, no trip to the callback queue), " +
                              "or `willSend` and `didFinishWith` (two trips per request).")
        for summary in measured {
            let bare: ClientSummary? = switch summary.client {
            case .courierNative, .courierNativeHeard: self.summary(.nativeBare)
            case .courierURLSession: self.summary(.urlSessionBare)
            default: nil
            }
            var timeOver: Double?
            if let full = summary.requestsPerSecond, let base = bare?.requestsPerSecond, full > 0, base > 0 {
                timeOver = 1 / full - 1 / base
            }
            var cpuOver: Double?
            if let full = summary.cpuPerRequest, let base = bare?.cpuPerRequest { cpuOver = full - base }
            table.rows.append([summary.label, Format.rate(summary.requestsPerSecond), Format.duration(summary.latencyP50),
                               Format.duration(summary.latencyP99), Format.duration(summary.cpuPerRequest),
                               Format.memory(kiB: summary.peakResidentKiB),
                               bare == nil ? "" : signed(timeOver), bare == nil ? "" : signed(cpuOver)])
        }
        table.notes.append("- \"over bare\": per request, the full pipeline's wall time (1 / req/s) and CPU minus the bare transport's.")
        if measured.contains(where: \.client.isPipelineAlone) {
            let pinned = WorkerCommand.pinsPipelineAlone
                ? "run pinned to one CPU (`taskset`), so that the hand-back is a switch between two threads of that CPU rather than a wake-up on another"
                : "not pinned to one CPU (`taskset` is missing), so the hand-back's wake-up of another CPU is part of it"
            table.notes.append("- \"pipeline alone, no socket\": `HTTPConnection` over a transport that answers at once in memory, plain and with the full pipeline: no socket and no event loop, so its CPU per request is the pipeline's own (with the request's own task and its hand-back to the caller), measured without the network's noise; \(pinned). Its rate is not comparable with the rows over the network.")
        }
        return table
    }

    private func authStormTable() -> Table {
        let ahc = summary(.asyncHTTPClient)?.elapsed
        var table = Table(title: scenario.title,
                          header: ["client", "all succeeded in", "token requests", "CPU/req", "peak threads", "peak RSS", "× AHC"])
        table.subtitle.append("\(scenario.template.requestCount ?? 0) requests at once, each with its own connection allowed; " +
                              "median of \(scenario.rounds) rounds; a fresh process (no token) per round.")
        for summary in measured {
            let tokens = Set(summary.tokenRequests).sorted().map(String.init).joined(separator: ", ")
            table.rows.append([summary.label, Format.duration(summary.elapsed), tokens.isEmpty ? "–" : tokens,
                               Format.duration(summary.cpuPerRequest), summary.peakThreads.map(String.init) ?? "–",
                               Format.memory(kiB: summary.peakResidentKiB),
                               Format.ratio(ahc.flatMap { ahc in summary.elapsed.map { ahc / $0 } })])
        }
        table.notes.append("- Courier holds the requests in its re-authentication queue. The other clients get the code a careful user writes (one shared token, one refresh at a time: `TokenCoordinator`).")
        table.notes.append("- \"token requests\" lists the distinct counts seen per round; it must be 1. \"× AHC\" is AsyncHTTPClient's time divided by the client's (above 1 is faster).")
        return table
    }

    private func soakTable() -> Table {
        let protocols = scenario.server == .http2
        var header = ["client", "requests", "req/s", "RSS samples (MiB)", "growth", "flat"]
        if protocols { header.insert("protocol, connections (server's view)", at: 3) }
        var table = Table(title: scenario.title, header: header)
        let flight = scenario.template.concurrency == 1 ? "Sequential GETs" : "GETs, \(scenario.template.concurrency) in flight,"
        table.subtitle.append("\(flight) of the small JSON; resident memory (VmRSS) read after every tenth of the run.")
        for summary in measured {
            let samples = summary.residentSamples.map { String(format: "%.1f", Double($0) / 1024) }.joined(separator: " ")
            var row = [summary.label, Format.count(summary.requests ?? 0), Format.rate(summary.requestsPerSecond),
                       samples, Format.memory(kiB: summary.residentGrowthKiB),
                       summary.residentIsFlat.map { $0 ? "yes" : "NO" } ?? "–"]
            if protocols {
                row.insert("\(summary.protocolDescription ?? "–"), \(summary.connections.map(String.init) ?? "–")", at: 3)
            }
            table.rows.append(row)
        }
        table.notes.append("- Courier's native transport runs the full count; the other clients run a tenth of it, sampled ten times too.")
        table.notes.append("- Flat: at most 2 MiB of growth from the first sample to the last.")
        return table
    }

    private func slowServerTable() -> Table {
        let ahc = summary(.asyncHTTPClient)?.elapsed
        let wanted = scenario.template.requestCount ?? 0
        var table = Table(title: scenario.title,
                          header: ["client", "total time", "completed", "p50", "p99", "peak threads", "peak RSS", "× AHC"])
        table.subtitle.append("\(Format.count(wanted)) requests started at once, as many connections allowed; cut short after \(Format.duration(scenario.template.timeLimit)).")
        for summary in measured {
            let done = summary.requests ?? 0
            table.rows.append([summary.label, summary.timedOut ? "> " + Format.duration(summary.elapsed) : Format.duration(summary.elapsed),
                               "\(Format.count(done)) of \(Format.count(wanted))",
                               Format.duration(summary.latencyP50), Format.duration(summary.latencyP99),
                               summary.peakThreads.map(String.init) ?? "–", Format.memory(kiB: summary.peakResidentKiB),
                               Format.ratio(ahc.flatMap { ahc in summary.elapsed.map { ahc / $0 } })])
        }
        table.notes.append("- Every client may open one connection per request, URLSession included (`httpMaximumConnectionsPerHost`).")
        table.notes.append("- Peak threads: the most threads of the client's process at once (sampled every 20 ms), without the sampling thread.")
        return table
    }

    /// The settings line of the timed tables.
    private var settings: String {
        let job = scenario.template
        return "\(job.concurrency) in flight, \(scenario.rounds) interleaved rounds of \(Format.duration(job.duration)) per client; medians over rounds."
    }

    private func signed(_ seconds: Double?) -> String {
        guard let seconds else { return "–" }
        return (seconds < 0 ? "−" : "+") + Format.duration(abs(seconds))
    }
}
