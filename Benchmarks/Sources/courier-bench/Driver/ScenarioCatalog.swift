import Foundation

/// The scenarios of the benchmark, with the settings the command line chose.
enum ScenarioCatalog {
    /// Every client that talks HTTP from Swift, in the order each round runs them.
    private static let swiftClients: [ClientKind] = [.courierNative, .courierURLSession, .urlSession, .asyncHTTPClient]

    /// Every scenario, in order.
    static func all(_ options: BenchOptions) -> [Scenario] {
        func timed(_ concurrency: Int, method: String = "GET", bodyBytes: Int = 0) -> WorkerJob {
            WorkerJob(client: .courierNative, url: "", method: method, bodyBytes: bodyBytes,
                      concurrency: concurrency, poolSize: concurrency, duration: options.duration,
                      warmupRequests: max(200, concurrency * 4), timeLimit: options.duration + 60, resultPath: "")
        }
        var cache = timed(1)
        cache.cache = true
        var pipeline = timed(1)
        pipeline.fullPipeline = true
        var storm = timed(1000)
        storm.requestCount = 1000
        storm.warmupRequests = 0
        storm.timeLimit = 60
        storm.auth = .init(tokenURL: "/auth/token", statsURL: "/auth/stats")
        var soak = timed(1)
        soak.requestCount = options.soakRequests
        soak.residentSampleInterval = max(options.soakRequests / 10, 1)
        soak.recordLatencies = false
        soak.warmupRequests = 1000
        soak.timeLimit = max(600, Double(options.soakRequests) / 2000)
        var slow = timed(options.slowRequests)
        slow.requestCount = options.slowRequests
        slow.warmupRequests = 0
        slow.recordLatencies = true
        slow.timeLimit = options.slowTimeLimit
        var handshake = timed(1)
        handshake.newConnectionPerRequest = true
        handshake.warmupRequests = 50
        let rounds = options.rounds
        let small = "/" + StaticFiles.small
        let tlsClients: [ClientKind] = [.courierNative, .asyncHTTPClient, .wrk]
        let tlsConcurrentClients: [ClientKind] = [.courierNative, .courierNativeTwoLoops, .asyncHTTPClient, .wrk]
        let http2Clients: [ClientKind] = [.courierNative, .asyncHTTPClient, .h2load]
        // HTTP/2: every client carries its requests on one connection, however many are in flight.
        func multiplexed(_ concurrency: Int) -> WorkerJob {
            var job = timed(concurrency)
            job.poolSize = 1
            return job
        }
        // Large bodies: one request per round (a download or an upload of the big file), or
        // every streamed download started at once; one small GET first (`warmupURL`).
        func transfer(_ kind: WorkerJob.Transfer, concurrency: Int = 1) -> WorkerJob {
            var job = timed(concurrency)
            job.transfer = kind
            job.method = kind == .uploadFromFile ? "PUT" : "GET"
            job.requestCount = concurrency
            job.warmupRequests = 0
            job.recordLatencies = false
            job.timeLimit = 600
            return job
        }
        var coalesce = storm
        coalesce.auth = nil
        coalesce.coalesces = true
        let largeClients: [ClientKind] = [.courierNative, .asyncHTTPClient, .blockingSocket]
        let large = Format.size(bytes: options.largeBytes)
        let streamSize = Format.size(bytes: options.streamBytes)
        var http2Soak = soak
        http2Soak.concurrency = 16
        http2Soak.poolSize = 1
        return [
            Scenario(number: 1, name: "sequential", title: "1. Sequential small GETs (\(StaticFiles.smallJSON.utf8.count)-byte JSON)",
                     kind: .throughput, server: .files, clients: swiftClients + [.courierNativeOnLoop, .nativeBare, .blockingSocket, .wrk],
                     rounds: rounds, path: small, template: timed(1)),
            Scenario(number: 2, name: "concurrent-16", title: "2a. 16 requests in flight",
                     kind: .throughput, server: .files, clients: swiftClients + [.courierNativeOnLoop, .courierNativeTwoLoops, .wrk],
                     rounds: rounds, path: small, template: timed(16)),
            Scenario(number: 2, name: "concurrent-256", title: "2b. 256 requests in flight",
                     kind: .throughput, server: .files, clients: swiftClients + [.courierNativeTwoLoops, .wrk], rounds: rounds,
                     path: small, template: timed(256)),
            Scenario(number: 3, name: "post-1k", title: "3a. POST with a 1 KiB JSON body",
                     kind: .throughput, server: .files, clients: swiftClients + [.blockingSocket, .wrk], rounds: rounds,
                     path: "/" + StaticFiles.post, template: timed(1, method: "POST", bodyBytes: 1024)),
            Scenario(number: 3, name: "get-1m", title: "3b. GET of a 1 MiB body",
                     kind: .throughput, server: .files, clients: swiftClients + [.blockingSocket, .wrk], rounds: rounds,
                     path: "/" + StaticFiles.large, template: timed(1)),
            Scenario(number: 4, name: "pipeline", title: "4. Pipeline overhead: full pipeline against the bare transport (sequential)",
                     kind: .pipeline, server: .files, clients: [.courierNative, .courierNativeHeard, .nativeBare, .courierURLSession, .urlSessionBare,
                                                     .pipelineAlone, .pipelineAloneFull],
                     rounds: rounds, path: small, template: pipeline),
            Scenario(number: 5, name: "auth-storm", title: "5. Auth storm: 1,000 concurrent requests that all meet a 401",
                     kind: .authStorm, server: .logic, clients: swiftClients, rounds: rounds,
                     path: "/auth/resource", template: storm),
            Scenario(number: 6, name: "cache", title: "6. Cache hits: fresh cached GETs (sequential)",
                     kind: .cache, server: .files, clients: [.courierNative, .courierURLSession, .urlSession], rounds: rounds,
                     path: "/" + StaticFiles.cached, template: cache),
            Scenario(number: 7, name: "soak", title: "7. Soak: \(options.soakRequests.formatted()) sequential requests, RSS sampled every tenth",
                     kind: .soak, server: .files, clients: swiftClients, rounds: 1, path: small, template: soak),
            Scenario(number: 8, name: "slow-server", title: "8. \(options.slowRequests.formatted()) requests in flight, every response delayed by 1 s",
                     kind: .slowServer, server: .logic, clients: swiftClients + [.nativeBare], rounds: 1, path: "/delay/1000", template: slow),
            Scenario(number: 9, name: "tls-sequential", title: "9a. HTTPS keep-alive, sequential small GETs",
                     kind: .throughput, server: .tls, clients: tlsClients, rounds: rounds, path: small, template: timed(1)),
            Scenario(number: 9, name: "tls-concurrent-16", title: "9b. HTTPS keep-alive, 16 requests in flight",
                     kind: .throughput, server: .tls, clients: tlsConcurrentClients, rounds: rounds, path: small, template: timed(16)),
            Scenario(number: 9, name: "tls-new-connection", title: "9c. HTTPS, a new connection per request, session tickets on",
                     kind: .throughput, server: .tls, clients: tlsClients, rounds: rounds, path: small, template: handshake),
            Scenario(number: 9, name: "tls-full-handshake", title: "9d. HTTPS, a new connection per request, session tickets off (full handshakes)",
                     kind: .throughput, server: .tlsFullHandshake, clients: tlsClients, rounds: rounds, path: small, template: handshake),
            Scenario(number: 10, name: "h2-sequential", title: "10a. HTTP/2 over TLS, one connection, sequential small GETs",
                     kind: .throughput, server: .http2, clients: http2Clients, rounds: rounds, path: small, template: multiplexed(1)),
            Scenario(number: 10, name: "h2-concurrent-16", title: "10b. HTTP/2 over TLS, one connection, 16 requests in flight",
                     kind: .throughput, server: .http2, clients: http2Clients, rounds: rounds, path: small, template: multiplexed(16)),
            Scenario(number: 10, name: "h2-concurrent-256", title: "10c. HTTP/2 over TLS, one connection, 256 requests in flight",
                     kind: .throughput, server: .http2, clients: http2Clients, rounds: rounds, path: small, template: multiplexed(256)),
            Scenario(number: 11, name: "h2-soak", title: "11. HTTP/2 soak: \(options.soakRequests.formatted()) requests, 16 in flight on one connection, RSS sampled every tenth",
                     kind: .soak, server: .http2, clients: [.courierNative, .asyncHTTPClient], rounds: 1, path: small, template: http2Soak),
            Scenario(number: 12, name: "download-to-file", title: "12a. A \(large) download to a file",
                     kind: .largeBody, server: .largeFiles, clients: largeClients, rounds: rounds,
                     path: "/large/" + LargeFiles.big, template: transfer(.downloadToFile)),
            Scenario(number: 12, name: "upload-from-file", title: "12b. A \(large) upload from a file (PUT)",
                     kind: .largeBody, server: .largeFiles, clients: largeClients, rounds: rounds,
                     path: "/\(LargeFiles.uploads)/", template: transfer(.uploadFromFile)),
            Scenario(number: 12, name: "streams", title: "12c. \(options.streamCount) streamed downloads of \(streamSize) at once",
                     kind: .largeBody, server: .largeFiles, clients: [.courierNative, .asyncHTTPClient], rounds: rounds,
                     path: "/large/" + LargeFiles.medium, template: transfer(.stream, concurrency: options.streamCount)),
            Scenario(number: 13, name: "coalescing", title: "13. Coalescing: 1,000 identical GETs at once, each answered after 200 ms",
                     kind: .coalescing, server: .logic, clients: [.courierNative, .courierURLSession, .asyncHTTPClient],
                     rounds: rounds, path: "/coalesce/item", template: coalesce),
        ]
    }

    /// The scenarios the filters select (all when there are none), with only the chosen clients.
    /// - Throws: ``BenchError`` when a filter selects nothing.
    static func selected(_ options: BenchOptions) throws -> [Scenario] {
        var scenarios = all(options)
        if !options.filters.isEmpty {
            for filter in options.filters where !scenarios.contains(where: { $0.matches(filter) }) {
                throw BenchError("no scenario matches '\(filter)'\n\n\(BenchOptions.usage)")
            }
            scenarios = scenarios.filter { scenario in options.filters.contains { scenario.matches($0) } }
        }
        if let clients = options.clients {
            scenarios = scenarios.map { scenario in
                Scenario(number: scenario.number, name: scenario.name, title: scenario.title, kind: scenario.kind,
                         server: scenario.server, clients: scenario.clients.filter(clients.contains),
                         rounds: scenario.rounds, path: scenario.path, template: scenario.template)
            }
        }
        return scenarios
    }
}
