import AsyncHTTPClient
import Foundation
import NIOSSL

/// swift-server's AsyncHTTPClient with its async/await API, on the shared singleton event loop
/// group (one loop per core), with as many connections per host as the job allows; in the
/// HTTP/2 scenarios with `httpVersion = .automatic` (ALPN `h2`, then `http/1.1`).
final class AsyncHTTPClientClient: BenchClient {
    private let client: HTTPClient

    /// Creates the client the job describes.
    init(job: WorkerJob) {
        var configuration = HTTPClient.Configuration()
        configuration.connectionPool = .init(idleTimeout: .seconds(60),
                                             concurrentHTTP1ConnectionsPerHostSoftLimit: job.poolSize)
        if job.http2 { configuration.httpVersion = .automatic }
        if let path = job.trustedCAPath, let ca = try? NIOSSLCertificate.fromPEMFile(path) {
            var tls = TLSConfiguration.makeClientConfiguration()
            tls.trustRoots = .certificates(ca)
            configuration.tlsConfiguration = tls
        }
        client = HTTPClient(eventLoopGroupProvider: .singleton, configuration: configuration)
    }

    /// Each kind of transfer runs in a function of its own, so that a request waiting on the
    /// network holds only the frame of its own kind (as the Courier client does).
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
        var message = HTTPClientRequest(url: request.url.absoluteString)
        message.method = .init(rawValue: request.method)
        for (name, value) in request.headers { message.headers.add(name: name, value: value) }
        if !request.body.isEmpty {
            message.headers.add(name: "Content-Type", value: "application/json")
            message.body = .bytes(request.body)
        }
        let response = try await client.execute(message, timeout: .seconds(60))
        let body = try await response.body.collect(upTo: 64 << 20)
        let bytes = request.keepsBody ? body.getBytes(at: body.readerIndex, length: body.readableBytes).map { Data($0) } : nil
        return BenchResponse(status: Int(response.status.code), bodyBytes: body.readableBytes, body: bytes,
                             tls: response.headers.first(name: "X-TLS"), serverProtocol: response.headers.first(name: "X-Protocol"))
    }

    @inline(never)
    private func download(_ request: BenchRequest, to file: URL) async throws -> BenchResponse {
        // AsyncHTTPClient's own way to a file: its file-download delegate.
        let delegate = try FileDownloadDelegate(path: file.path)
        let task = client.execute(request: try HTTPClient.Request(url: request.url.absoluteString), delegate: delegate)
        let progress = try await task.futureResult.get()
        return BenchResponse(status: Int(progress.head.status.code), bodyBytes: progress.receivedBytes)
    }

    @inline(never)
    private func upload(_ request: BenchRequest, from file: URL, bytes: Int64) async throws -> BenchResponse {
        var message = HTTPClientRequest(url: request.url.absoluteString)
        message.method = .PUT
        message.body = .stream(FileByteBuffers(path: file.path), length: .known(bytes))
        let response = try await client.execute(message, timeout: .seconds(600))
        _ = try await response.body.collect(upTo: 1 << 20)
        return BenchResponse(status: Int(response.status.code), bodyBytes: Int(bytes))
    }

    @inline(never)
    private func stream(_ request: BenchRequest) async throws -> BenchResponse {
        let response = try await client.execute(HTTPClientRequest(url: request.url.absoluteString), timeout: .seconds(600))
        var received = 0
        for try await buffer in response.body { received += buffer.readableBytes }
        return BenchResponse(status: Int(response.status.code), bodyBytes: received)
    }

    func shutdown() async {
        try? await client.shutdown()
    }
}
