import Foundation

/// One measurement, run by a worker process of its own so that CPU time, threads and peak
/// memory belong to one client alone. The driver passes it as JSON on the command line.
struct WorkerJob: Codable, Sendable {
    /// The command-line argument that makes `courier-bench` a worker.
    static let argument = "--worker"

    /// Where the token endpoint and its counter live, for the auth storm.
    struct AuthEndpoints: Codable, Sendable {
        /// The token endpoint (POST, Basic credentials, answers `{"access_token": "..."}`).
        var tokenURL: String
        /// Answers `{"tokens": N}`: how many tokens the server has issued.
        var statsURL: String
    }

    /// How a large-body job moves its body (scenarios 12a–12c).
    enum Transfer: String, Codable, Sendable {
        /// A GET whose body the client writes into a file (``WorkerJob/transferFile``).
        case downloadToFile = "download-to-file"
        /// A PUT whose body the client reads from a file (``WorkerJob/transferFile``).
        case uploadFromFile = "upload-from-file"
        /// A GET whose body the client reads as it arrives and drops, chunk by chunk.
        case stream
    }

    /// The client to measure.
    var client: ClientKind
    /// The URL every request goes to.
    var url: String
    /// `GET` or `POST`.
    var method = "GET"
    /// The size of the JSON body sent with a POST; 0 for none.
    var bodyBytes = 0
    /// Requests in flight at once.
    var concurrency = 1
    /// Connections the client may open to the host.
    var poolSize = 1
    /// Run for this many seconds (a timed run), unless ``requestCount`` is set.
    var duration: Double = 3
    /// Run exactly this many requests (a counted run).
    var requestCount: Int?
    /// Requests sent before measuring, to open connections and warm caches.
    var warmupRequests = 200
    /// Whether to keep every request's latency (for percentiles).
    var recordLatencies = true
    /// Sample resident memory after every this many requests (the soak).
    var residentSampleInterval: Int?
    /// Whether Courier's HTTP cache is on (the cache scenario); URLSession gets a `URLCache`.
    var cache = false
    /// Whether Courier runs its full pipeline: delegate, retry policy, authentication with a
    /// known credential (the pipeline overhead scenario).
    var fullPipeline = false
    /// The token endpoints, when requests must authenticate (the auth storm).
    var auth: AuthEndpoints?
    /// Whether Courier coalesces identical concurrent GETs (`coalescesRequests`).
    var coalesces = false
    /// Answers `{"requests": N}`: how many requests the server answered (the coalescing scenario).
    var serverCountURL: String?
    /// The CA certificate (PEM file) to trust over HTTPS, the only one trusted.
    var trustedCAPath: String?
    /// Whether the client offers HTTP/2 by ALPN (`h2`, then `http/1.1`) and carries every
    /// request on one HTTP/2 connection (Courier: `maxHTTP2ConnectionsPerHost` 1).
    var http2 = false
    /// Whether every request asks for its own connection (`Connection: close`): one TLS
    /// handshake per request.
    var newConnectionPerRequest = false
    /// How the body moves, in the large-body scenarios; `nil`: the client collects it in memory.
    var transfer: Transfer?
    /// The file a download goes into, or an upload comes from.
    var transferFile: String?
    /// Where nginx stores this client's upload, checked and deleted after each one.
    var storedUploadFile: String?
    /// The body size every transfer must move; a response or upload of another size is an error.
    var transferBytes: Int64?
    /// A small GET sent once before the measured phase when ``warmupRequests`` is 0 (the
    /// large-body scenarios): it opens a connection and loads the libraries, so that the resident
    /// memory at the start is the client's, not the first request's.
    var warmupURL: String?
    /// The worker stops sending and cancels what is in flight after this many seconds.
    var timeLimit: Double = 120
    /// Where the worker writes its ``WorkerResult`` as JSON.
    var resultPath: String

    /// Whether the run is counted rather than timed.
    var isCounted: Bool { requestCount != nil }
}

/// What a worker measured.
struct WorkerResult: Codable, Sendable {
    /// Requests that completed with a 2xx status.
    var requests = 0
    /// Body bytes the completed requests moved (the large-body scenarios).
    var bytes: Int64 = 0
    /// Requests that failed or ended with another status.
    var errors = 0
    /// Wall-clock seconds of the measured phase.
    var elapsed: Double = 0
    /// Median latency in seconds, if latencies were kept.
    var latencyP50: Double?
    /// 99th percentile latency in seconds, if latencies were kept.
    var latencyP99: Double?
    /// CPU seconds (user + system) the process used in the measured phase.
    var cpuSeconds: Double = 0
    /// Context switches of every thread of the process in the measured phase (`getrusage`);
    /// for wrk and h2load, over their whole run (`wait4`). `nil` when not measured.
    var contextSwitches: Int?
    /// The process's peak resident memory (`VmHWM`), in KiB.
    var peakResidentKiB = 0
    /// Resident memory (`VmRSS`) after the warm-up, as the measured phase starts, in KiB.
    var startResidentKiB = 0
    /// The most threads seen at once in the measured phase.
    var peakThreads = 0
    /// Resident memory (`VmRSS`) sampled every ``WorkerJob/residentSampleInterval`` requests, in KiB.
    var residentSamplesKiB: [Int] = []
    /// Tokens the server issued during the run (the auth storm).
    var tokenRequests: Int?
    /// Requests that reached the server during the run (the coalescing scenario).
    var serverRequests: Int?
    /// Responses served from a cache.
    var cacheHits = 0
    /// Whether the time limit stopped the run before it was done.
    var timedOut = false
    /// The first error, in words.
    var firstError: String?
    /// The server's `X-TLS` answer of the first response: protocol, cipher, and `r` or `.`.
    var tlsDescription: String?
    /// Responses whose connection resumed a TLS session (the server's `X-TLS` ends in `r`).
    var resumedResponses = 0
    /// The protocol the server saw for the first response (its `X-Protocol` field, e.g.
    /// `HTTP/2.0`), or for h2load the protocol it negotiated.
    var protocolDescription: String?
    /// How many distinct connections the server saw the measured requests on (nginx's
    /// `$connection` in `X-Protocol`); for h2load, the connections it opened.
    var connections: Int?

    /// Completed requests per second.
    var requestsPerSecond: Double { elapsed > 0 ? Double(requests) / elapsed : 0 }
    /// Body bytes moved per second.
    var bytesPerSecond: Double { elapsed > 0 ? Double(bytes) / elapsed : 0 }
    /// CPU seconds per completed request.
    var cpuPerRequest: Double? { requests > 0 ? cpuSeconds / Double(requests) : nil }
    /// Context switches per completed request: how often a thread of the client slept or
    /// was preempted, per request.
    var switchesPerRequest: Double? {
        guard let contextSwitches, requests > 0 else { return nil }
        return Double(contextSwitches) / Double(requests)
    }
}
