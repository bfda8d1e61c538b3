import Courier
import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// `HTTPConnection` over the native transport or `URLSessionTransport`.
///
/// By default it runs the pipeline as a plain user would, with the HTTP cache off (the peers have
/// none). The job can switch on the cache, the full pipeline (a delegate, a retry policy and a
/// bearer credential that is already known), the re-authentication queue, or the coalescing of
/// identical concurrent GETs. The pipeline-alone clients run over ``InstantTransport``, plain or
/// with the full pipeline whatever the job says.
final class CourierClient: BenchClient {
    private let connection: HTTPConnection
    private let transport: any Transport
    private let delegate: (any HTTPConnectionDelegate)?
    let handlesAuthentication: Bool

    /// Creates the connection the job describes.
    init(job: WorkerJob) {
        let fullPipeline = job.client.isPipelineAlone ? job.client == .pipelineAloneFull : job.fullPipeline
        transport = Self.makeTransport(job)
        let cache = job.cache ? HTTPCache(memoryCapacity: 8 << 20) : nil
        var configuration = HTTPConnection.Configuration(
            cachePolicy: job.cache ? .useProtocolCachePolicy : .reloadIgnoringCache,
            retryPolicy: fullPipeline ? .exponentialBackoff() : .never,
            validation: .acceptAll,
            transport: transport,
            cache: cache)
        configuration.coalescesRequests = job.coalesces
        connection = HTTPConnection(configuration: configuration)
        delegate = !fullPipeline ? nil : job.client == .courierNativeHeard ? ListeningDelegate() as any HTTPConnectionDelegate : SilentDelegate()
        connection.delegate = delegate
        handlesAuthentication = job.auth != nil
        laneExecutor = job.client == .courierNativeOnLoop ? connection.executor : nil
        if let auth = job.auth, let tokenURL = URL(string: auth.tokenURL) {
            connection.authenticate(matching: .prefix(job.url), with: Self.bearer(tokenURL: tokenURL))
        } else if fullPipeline, let tokenURL = URL(string: job.url) {
            connection.authenticate(matching: .prefix(job.url), with: Self.bearer(tokenURL: tokenURL),
                                    store: KnownCredentialStore())
        }
    }

    /// The transport of `job.client`, with a pool as large as the job's.
    static func makeTransport(_ job: WorkerJob) -> any Transport {
        switch job.client {
        case .courierURLSession, .urlSessionBare:
            // As many connections per host as the job's pool (URLSessionTransport keeps the
            // configuration's limit).
            let configuration = URLSessionConfiguration.ephemeral
            configuration.httpMaximumConnectionsPerHost = job.poolSize
            return URLSessionTransport(configuration: configuration)
        case .pipelineAlone, .pipelineAloneFull:
            return InstantTransport()
        default:
            var tls = TLSOptions()
            if let path = job.trustedCAPath, let pem = FileManager.default.contents(atPath: path) {
                tls.trustRoots = .pem(pem)
            }
            var configuration = NativeTransport.Configuration(maxConnectionsPerHost: job.poolSize, tls: tls)
            if job.client == .courierNativeTwoLoops { configuration.loopCount = 2 }
            if job.http2 {
                configuration.httpVersion = .automatic
                configuration.maxHTTP2ConnectionsPerHost = 1
            }
            return NativeTransport(configuration: configuration)
        }
    }

    /// A bearer token authenticator against the bench server's token endpoint.
    static func bearer(tokenURL: URL) -> BearerTokenAuthenticator {
        .bearerToken(tokenURL: tokenURL, credentials: { _ in (name: "bench", password: "bench") }) { response in
            let token = try JSONDecoder().decode(TokenReply.self, from: response.body)
            return .init(value: token.accessToken)
        }
    }

    /// Each kind of transfer runs in a function of its own, so that a request waiting on the
    /// network holds only the frame of its own kind (10,000 in flight: one frame for every kind
    /// took 2,688 bytes of task memory per request).
    func send(_ request: BenchRequest) async throws -> BenchResponse {
        switch request.transfer {
        case .collect: try await collect(request)
        case .downloadToFile(let file): try await download(request, to: file)
        case .uploadFromFile(let file, let bytes): try await upload(request, from: file, bytes: bytes)
        case .stream: try await stream(request)
        }
    }

    @inline(never)
    private func collect(_ request: BenchRequest) async throws -> BenchResponse {
        let body: HTTPRequest.Body = request.body.isEmpty ? .none : .data(request.body, contentType: "application/json")
        let message = HTTPRequest(HTTPRequest.Method(rawValue: request.method), request.url.absoluteString,
                                  headers: HTTPHeaders(request.headers), body: body)
        let response = try await connection.send(message)
        return BenchResponse(status: response.status.code, bodyBytes: response.body.count,
                             fromCache: response.source == .cache, body: request.keepsBody ? response.body : nil,
                             tls: response.headers["X-TLS"], serverProtocol: response.headers["X-Protocol"])
    }

    @inline(never)
    private func download(_ request: BenchRequest, to file: URL) async throws -> BenchResponse {
        let result = try await connection.download(HTTPRequest(.get, request.url.absoluteString), to: file)
        return BenchResponse(status: result.response.status.code, bodyBytes: Int(result.byteCount))
    }

    @inline(never)
    private func upload(_ request: BenchRequest, from file: URL, bytes: Int64) async throws -> BenchResponse {
        let response = try await connection.send(HTTPRequest(.put, request.url.absoluteString, body: try .file(file)))
        return BenchResponse(status: response.status.code, bodyBytes: Int(bytes))
    }

    @inline(never)
    private func stream(_ request: BenchRequest) async throws -> BenchResponse {
        let response = try await connection.stream(HTTPRequest(.get, request.url.absoluteString))
        var received = 0
        for try await chunk in response.body { received += chunk.count }
        return BenchResponse(status: response.status.code, bodyBytes: received)
    }

    /// The connection's executor for ``ClientKind/courierNativeOnLoop``, else `nil`.
    let laneExecutor: (any TaskExecutor)?

    func shutdown() async {
        (transport as? NativeTransport)?.shutdown()
    }
}

/// The token endpoint's answer.
struct TokenReply: Decodable {
    /// The token.
    var accessToken: String

    enum CodingKeys: String, CodingKey {
        case accessToken = "access_token"
    }
}

/// A delegate that implements no method: once the connection has seen that, it makes no trip to
/// the callback queue for it.
final class SilentDelegate: HTTPConnectionDelegate {}

/// A delegate that implements `willSend` (a round trip to the callback queue before the request
/// goes out) and `didFinishWith` (a trip at the end), and does nothing in them: the cost of
/// delivering them.
final class ListeningDelegate: HTTPConnectionDelegate {
    func connection(_ connection: HTTPConnection, willSend request: HTTPRequest, id: RequestID) -> HTTPRequest { request }
    func connection(_ connection: HTTPConnection, request id: RequestID, didFinishWith response: HTTPResponse) {}
}

/// A credential store that always knows the credential, so that no refresh ever runs.
struct KnownCredentialStore: CredentialStore {
    func load(for key: String) -> Credential? { Credential(user: "bench", secret: "known-token") }
    func save(_ credential: Credential, for key: String) {}
    func remove(for key: String) {}
}
