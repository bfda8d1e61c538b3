import Courier
import CourierTestServer
import CourierTestSupport
import Foundation
import Testing

/// What one request of a reliability case ended with, as its user saw it.
struct CaseOutcome: Sendable {
    /// The request's id.
    let id: RequestID
    /// The terminal result the closures delivered.
    let result: Result<HTTPResponse, HTTPConnectionError>

    /// The response, when the request succeeded.
    var response: HTTPResponse? { try? result.get() }

    /// The error, when the request failed.
    var error: HTTPConnectionError? {
        if case .failure(let error) = result { return error }
        return nil
    }

    /// The status code of the response, or of the response an error carries.
    var status: Int? { response?.status.code ?? error?.response?.status.code }
}

/// A server a reliability case runs against: its base URL, and the port whose client sockets
/// must all be closed at the end. It must answer the follow-up `GET /echo` with 200.
protocol CaseServer {
    var baseURL: URL { get }
    var port: Int { get }
}

extension TestServer: CaseServer {}
extension HTTP2ScriptedPeer: CaseServer {}
extension ThreadedListener: CaseServer {
    /// `http://127.0.0.1:<port>`.
    var baseURL: URL { URL(string: "http://127.0.0.1:\(port)")! }
}

/// The connection a case runs on, and what it recorded, for the case's own checks.
struct CaseContext {
    let connection: HTTPConnection
    let recorder: EventRecorder
    let leaks: LeakCheck
}

/// Runs the requests of a reliability case the way a user would (closures and a delegate), and
/// checks the promises the catalogue (`../shared/reliability-cases.md`) makes for every case:
/// - every request gets exactly one terminal callback, through its closures and through the
///   delegate, even after a pause that would reveal a late second one;
/// - the connection still serves the next request (`GET /echo` on `server`);
/// - nothing leaks: connection, delegate, transport, pools and sockets are all gone at the end
///   (``LeakCheck``).
///
/// The caller asserts the case's own outcome on the returned outcomes, in request order.
///
/// - Parameters:
///   - transport: the transport under test (a fresh instance is made).
///   - server: the server the connection's base URL points at; it also answers the follow-up.
///   - requests: the case's requests, started at once; an absolute URL reaches another server.
///   - timeout: the connection's timeout. Default: 10 s.
///   - configure: adjusts the connection's configuration (retry policy, deadline…).
///   - prepare: runs on the connection before the requests start (authenticators, priming requests…).
///   - during: runs once every request has started (cancels, rotations…).
///   - ended: runs with a request's index as its terminal closure runs.
/// - Returns: each request's outcome, in order.
func runCase(_ transport: TransportUnderTest, on server: some CaseServer, _ requests: [HTTPRequest],
             timeout: Duration? = .seconds(10),
             configure: (inout HTTPConnection.Configuration) -> Void = { _ in },
             prepare: (HTTPConnection) async throws -> Void = { _ in },
             during: (CaseContext, [RequestID]) async throws -> Void = { _, _ in },
             ended: @escaping @Sendable (Int) -> Void = { _ in },
             sourceLocation: SourceLocation = #_sourceLocation) async throws -> [CaseOutcome] {
    try await withLeakCheck(sourceLocation: sourceLocation) { leaks in
        let connection = leaks.connection(server, transport, timeout: timeout, configure: configure)
        let recorder = leaks.track(EventRecorder())
        connection.delegate = recorder
        try await prepare(connection)
        let results = Locked<[Int: [Result<HTTPResponse, HTTPConnectionError>]]>([:])
        var ids: [RequestID] = []
        for (index, request) in requests.enumerated() {
            let record: @Sendable (Result<HTTPResponse, HTTPConnectionError>) -> Void = { result in
                ended(index)
                results.withLock { $0[index, default: []].append(result) }
            }
            ids.append(connection.start(request, onDidStart: recorder.onDidStart, onSuccess: { response in
                record(.success(response))
                recorder.onSuccess(response)
            }, onError: { error in
                record(.failure(error))
                recorder.onError(error)
            }))
        }
        try await during(CaseContext(connection: connection, recorder: recorder, leaks: leaks), ids)
        let count = requests.count
        #expect(await eventually { recorder.closureTerminalCount >= count && recorder.terminalCount >= count },
                "not every request ended: \(recorder.events)", sourceLocation: sourceLocation)
        try await Task.sleep(for: .milliseconds(100))  // a late second terminal callback would land here
        let delivered = results.withLock { $0 }
        for (index, id) in ids.enumerated() {
            let terminals = recorder.events.filter { $0.isTerminal && $0.requestID == id }.count
            #expect(delivered[index]?.count == 1, "request \(id): \(delivered[index]?.count ?? 0) terminal closures", sourceLocation: sourceLocation)
            #expect(terminals == 1, "request \(id): \(terminals) terminal delegate callbacks", sourceLocation: sourceLocation)
        }
        let followUp = try await connection.get("/echo")
        #expect(followUp.status.code == 200, "the connection no longer serves", sourceLocation: sourceLocation)
        return try ids.enumerated().map { index, id in
            CaseOutcome(id: id, result: try #require(delivered[index]?.first, sourceLocation: sourceLocation))
        }
    }
}

/// Runs a single-request reliability case; see ``runCase(_:on:_:timeout:configure:prepare:during:sourceLocation:)``.
func runCase(_ transport: TransportUnderTest, on server: some CaseServer, _ request: HTTPRequest,
             timeout: Duration? = .seconds(10),
             configure: (inout HTTPConnection.Configuration) -> Void = { _ in },
             prepare: (HTTPConnection) async throws -> Void = { _ in },
             during: (CaseContext, [RequestID]) async throws -> Void = { _, _ in },
             sourceLocation: SourceLocation = #_sourceLocation) async throws -> CaseOutcome {
    let outcomes = try await runCase(transport, on: server, [request], timeout: timeout, configure: configure,
                                     prepare: prepare, during: during, sourceLocation: sourceLocation)
    return try #require(outcomes.first, sourceLocation: sourceLocation)
}

extension EventRecorder.Event {
    /// The request a delegate event belongs to; `nil` for closure events.
    var requestID: RequestID? {
        switch self {
        case .willSend(let id), .didStart(let id), .head(let id, _), .data(let id, _, _), .finish(let id, _),
             .fail(let id, _), .cancel(let id), .closureStart(let id):
            id
        case .closureSuccess, .closureError:
            nil
        }
    }
}
