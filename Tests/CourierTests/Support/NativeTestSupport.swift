import Courier
import CourierTestServer
import CourierTestSupport
import Foundation
import Glibc
import Synchronization
import Testing

/// Sends one request straight through a transport (no pipeline), as the native transport tests do.
func fetch(_ transport: any Transport, _ url: URL, method: HTTPRequest.Method = .get, body: Data = Data(),
           headers: HTTPHeaders = [:], timeout: Duration = .seconds(10), maxBodySize: Int = 64 << 20,
           observer: any TransportObserver = IgnoringTransportObserver()) async throws(HTTPConnectionError) -> HTTPResponse {
    let request = TransportRequest(method: method, url: url, headers: headers, body: body,
                                   timeout: timeout, maxResponseBodySize: maxBodySize)
    return try await transport.send(request, observer: observer)
}

/// Runs `body` and returns the `HTTPConnectionError` it throws, or `nil` when it succeeds.
func failure(_ body: () async throws(HTTPConnectionError) -> HTTPResponse) async -> HTTPConnectionError? {
    do {
        _ = try await body()
        return nil
    } catch {
        return error
    }
}

/// A transport observer that records what it hears.
final class RecordingObserver: TransportObserver {
    struct Progress: Equatable, Sendable {
        let count: Int
        let soFar: Int64
        let expected: Int64?
    }

    let observesBody: Bool
    private let heads = Mutex<[Int]>([])
    private let chunks = Mutex<[Progress]>([])

    init(observesBody: Bool = true) {
        self.observesBody = observesBody
    }

    var headStatuses: [Int] { heads.withLock { $0 } }
    var progress: [Progress] { chunks.withLock { $0 } }

    func transportDidReceiveHead(_ head: HTTPResponse.Head) {
        heads.withLock { $0.append(head.status.code) }
    }

    func transportDidReceiveBody(_ data: Data, bytesSoFar: Int64, expectedTotal: Int64?) {
        chunks.withLock { $0.append(Progress(count: data.count, soFar: bytesSoFar, expected: expectedTotal)) }
    }
}

/// Runs a native-transport test against a fresh ``TestServer`` and a fresh native transport,
/// under a ``LeakCheck`` that watches the server's port; shuts both down afterwards.
/// - Parameter body: the test, given the server and the transport.
func withNativeServer(sourceLocation: SourceLocation = #_sourceLocation,
                      _ body: (TestServer, NativeTransport) async throws -> Void) async throws {
    let server = try TestServer()
    defer { server.shutdown() }
    try await withLeakCheck(sourceLocation: sourceLocation) { leaks in
        leaks.watch(server)
        let transport = leaks.native()
        defer { transport.shutdown() }
        try await body(server, transport)
    }
}
