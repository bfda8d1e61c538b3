import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// Foundation's `URLSession` used directly, as an app would: `data(for:)` on an ephemeral
/// session, with as many connections per host as the job allows. In the cache scenario the
/// session gets an in-memory `URLCache` and the protocol cache policy.
final class URLSessionClient: BenchClient {
    private let session: URLSession

    /// Creates the session the job describes.
    init(job: WorkerJob) {
        let configuration = URLSessionConfiguration.ephemeral
        configuration.httpMaximumConnectionsPerHost = job.poolSize
        configuration.timeoutIntervalForRequest = 60
        if job.cache {
            configuration.urlCache = URLCache(memoryCapacity: 8 << 20, diskCapacity: 0, diskPath: nil)
            configuration.requestCachePolicy = .useProtocolCachePolicy
        } else {
            configuration.urlCache = nil
            configuration.requestCachePolicy = .reloadIgnoringLocalCacheData
        }
        session = URLSession(configuration: configuration)
    }

    func send(_ request: BenchRequest) async throws -> BenchResponse {
        var message = URLRequest(url: request.url)
        message.httpMethod = request.method
        for (name, value) in request.headers { message.addValue(value, forHTTPHeaderField: name) }
        if !request.body.isEmpty {
            message.httpBody = request.body
            message.setValue("application/json", forHTTPHeaderField: "Content-Type")
        }
        let (data, response) = try await session.data(for: message)
        let status = (response as? HTTPURLResponse)?.statusCode ?? 0
        return BenchResponse(status: status, bodyBytes: data.count, body: request.keepsBody ? data : nil)
    }

    func shutdown() async {
        session.invalidateAndCancel()
    }
}
