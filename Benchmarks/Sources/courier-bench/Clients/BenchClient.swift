import Foundation

/// One request, in the same words for every client.
struct BenchRequest: Sendable {
    /// `GET` or `POST`.
    var method: String
    /// The absolute URL.
    var url: URL
    /// Extra header fields.
    var headers: [(String, String)] = []
    /// The body; empty for none.
    var body = Data()
    /// Whether the response body is wanted (only token responses); otherwise it is only counted.
    var keepsBody = false
    /// How the body moves; by default the response is collected in memory.
    var transfer = BenchTransfer.collect
}

/// How a request's body moves.
enum BenchTransfer: Sendable {
    /// The response body is collected in memory (``BenchRequest/body`` is the request's).
    case collect
    /// The response body goes into this file, created or replaced.
    case downloadToFile(URL)
    /// The request body is this file's bytes, read as they are sent (a PUT).
    case uploadFromFile(URL, bytes: Int64)
    /// The response body is read as it arrives and dropped.
    case stream
}

/// What the benchmark keeps of a response.
struct BenchResponse: Sendable {
    /// The status code.
    var status: Int
    /// The body's size in bytes: received, or sent for an upload.
    var bodyBytes: Int
    /// Whether the client answered from its cache without the network.
    var fromCache = false
    /// The body, when the request asked for it.
    var body: Data?
    /// The server's `X-TLS` field (protocol, cipher, resumed), over HTTPS.
    var tls: String?
    /// The server's `X-Protocol` field (`$server_protocol $connection`), in the HTTP/2 scenarios.
    var serverProtocol: String?
}

/// An HTTP client under measurement.
protocol BenchClient: Sendable {
    /// Whether the client answers 401 challenges itself (Courier's re-authentication queue);
    /// the others get a ``TokenCoordinator`` from the workload.
    var handlesAuthentication: Bool { get }
    /// Sends one request and reads its whole response.
    /// - Throws: whatever the client throws for a failed request.
    func send(_ request: BenchRequest) async throws -> BenchResponse
    /// Releases the client's connections and threads.
    func shutdown() async
    /// The executor the workload's lanes prefer; `nil` for Swift's global executor.
    var laneExecutor: (any TaskExecutor)? { get }
}

extension BenchClient {
    /// `false`.
    var handlesAuthentication: Bool { false }
    /// `nil`: lanes run on Swift's global executor, as a caller's code usually does.
    var laneExecutor: (any TaskExecutor)? { nil }
}

/// Builds the client a job asks for.
enum ClientFactory {
    /// The client for `job`.
    /// - Throws: when the client cannot be created (e.g. the socket cannot connect).
    static func make(for job: WorkerJob) throws -> any BenchClient {
        switch job.client {
        case .courierNative, .courierNativeOnLoop, .courierNativeTwoLoops, .courierNativeHeard, .courierURLSession, .pipelineAlone, .pipelineAloneFull:
            return CourierClient(job: job)
        case .nativeBare, .urlSessionBare:
            return CourierBareTransportClient(job: job)
        case .urlSession:
            return URLSessionClient(job: job)
        case .asyncHTTPClient:
            return AsyncHTTPClientClient(job: job)
        case .blockingSocket:
            return try BlockingSocketClient(job: job)
        case .wrk, .h2load:
            throw BenchError("\(job.client.rawValue) runs as a process of its own, not in a worker")
        }
    }
}

/// A benchmark failure, in words.
struct BenchError: Error, CustomStringConvertible {
    /// What went wrong.
    var description: String
    /// Creates the error.
    init(_ description: String) { self.description = description }
}
