import Foundation

/// One benchmark scenario: which clients run, what each sends to which server, how many
/// rounds, and which table reports it.
struct Scenario: Sendable {
    /// Which table the scenario fills.
    enum Kind: Sendable {
        /// Requests per second, latency, CPU and memory (scenarios 1–3).
        case throughput
        /// The full pipeline against the bare transport (4).
        case pipeline
        /// 1,000 concurrent requests that all meet a 401 (5).
        case authStorm
        /// Fresh cached GETs (6).
        case cache
        /// A million sequential requests with memory samples (7).
        case soak
        /// 10,000 requests in flight against a slow server (8).
        case slowServer
        /// Bodies of gigabytes to and from files, and many streamed at once: bytes per second
        /// and the growth of resident memory (12).
        case largeBody
        /// 1,000 identical concurrent GETs: how many reach the server, and how long all take (13).
        case coalescing
    }

    /// Which server answers.
    enum Server: Sendable {
        /// nginx, or the bench server when nginx is missing.
        case files
        /// The bench server (CourierTestServer in its own process).
        case logic
        /// nginx over HTTPS (TLS 1.3) with session tickets.
        case tls
        /// nginx over HTTPS (TLS 1.3) without session tickets or cache: full handshakes only.
        case tlsFullHandshake
        /// nginx over HTTPS (TLS 1.3) with HTTP/2 offered by ALPN (`listen ... ssl http2`).
        case http2
        /// nginx alone (no stand-in): the large files under `/large/`, PUT uploads under `/upload/`.
        case largeFiles
    }

    /// The scenario's number (1–13); sub-scenarios share it.
    let number: Int
    /// The name the filter matches, e.g. `concurrent-16`.
    let name: String
    /// The table's title.
    let title: String
    /// The table it fills.
    let kind: Kind
    /// Who answers.
    let server: Server
    /// The clients, in the order each round runs them.
    let clients: [ClientKind]
    /// Interleaved rounds.
    let rounds: Int
    /// The path requested on the server.
    let path: String
    /// Every setting but the client, URL and result file.
    let template: WorkerJob

    /// Whether a filter argument (a number or a name prefix) selects the scenario.
    func matches(_ filter: String) -> Bool {
        filter == String(number) || name.hasPrefix(filter.lowercased())
    }

    /// The job for `client` against `baseURL`.
    ///   (`trustedCAPath` is the CA the clients trust over HTTPS; `large` holds the files of
    ///   the large-body scenarios.)
    func job(for client: ClientKind, baseURL: URL, resultPath: String, trustedCAPath: String? = nil,
             large: LargeFiles? = nil) -> WorkerJob {
        var job = template
        job.client = client
        job.url = baseURL.absoluteString + path
        job.resultPath = resultPath
        if baseURL.scheme == "https" { job.trustedCAPath = trustedCAPath }
        job.http2 = server == .http2
        if kind == .soak, client != .courierNative, let count = job.requestCount {
            job.requestCount = max(count / 10, 1)
            job.residentSampleInterval = max(count / 100, 1)
        }
        if let transfer = job.transfer, let large {
            job.warmupURL = baseURL.absoluteString + "/" + StaticFiles.small
            switch transfer {
            case .downloadToFile:
                job.transferFile = large.download(by: client).path
                job.transferBytes = large.bigBytes
            case .uploadFromFile:
                job.url = baseURL.absoluteString + "/\(LargeFiles.uploads)/\(client.rawValue).bin"
                job.transferFile = large.folder.appendingPathComponent(LargeFiles.big).path
                job.storedUploadFile = large.uploaded(by: client).path
                job.transferBytes = large.bigBytes
            case .stream:
                job.transferBytes = large.mediumBytes
            }
        }
        if kind == .coalescing {
            job.serverCountURL = baseURL.absoluteString + "/coalesce/stats"
        }
        if let auth = job.auth {
            job.auth = .init(tokenURL: baseURL.absoluteString + auth.tokenURL, statsURL: baseURL.absoluteString + auth.statsURL)
        }
        return job
    }

    /// The load generator in C that is the scenario's ceiling: h2load over HTTP/2, else wrk.
    var ceiling: ClientKind { server == .http2 ? .h2load : .wrk }

    /// The row's name for `client`.
    func label(for client: ClientKind) -> String {
        if kind == .coalescing, client == .courierNative || client == .courierURLSession {
            return client.title + ", coalescesRequests"
        }
        guard kind == .pipeline else { return client.title }
        switch client {
        case .courierNative: return "Courier (native), full pipeline"
        case .courierNativeHeard: return "Courier (native), full pipeline, delegate with willSend and didFinishWith"
        case .courierURLSession: return "Courier (URLSessionTransport), full pipeline"
        default: return client.title
        }
    }
}
