import Courier
import CourierTestServer
import CourierTestSupport
import Foundation
import Testing

/// Security finding I7: requests that bypass the connection's plan (an authenticator's `apply`,
/// `AuthenticationContext.send`, a transport used directly) are validated by both transports.
@Suite("Transport request validation")
struct TransportValidationTests {
    /// The value that would add a field `X: y` of its own if it reached the wire as it is.
    static let splitting = "a\r\nX: y"

    /// Puts its credential, whatever it holds, in `X-Api-Key`; its refresh hands out ``splitting``.
    struct SplittingAuthenticator: Authenticator {
        func apply(_ credential: Credential, to request: inout TransportRequest) {
            request.headers.set(credential.secret, for: "X-Api-Key")
        }

        func refresh(previous: Credential?, context: AuthenticationContext) async throws -> Credential {
            Credential(secret: TransportValidationTests.splitting)
        }
    }

    /// Sends a token request with a field value that would split it.
    struct SplittingTokenRequest: Authenticator {
        let tokenURL: URL
        /// What each token request ended with.
        let sent: Locked<[HTTPConnectionError]>

        func apply(_ credential: Credential, to request: inout TransportRequest) {
            request.headers.set(credential.secret, for: "X-Api-Key")
        }

        func refresh(previous: Credential?, context: AuthenticationContext) async throws -> Credential {
            let token = TransportRequest(method: .post, url: tokenURL, headers: ["X-Client": TransportValidationTests.splitting])
            do {
                _ = try await context.send(token)
            } catch {
                sent.withLock { $0.append(error) }
                throw error
            }
            return Credential(secret: "never")
        }
    }

    /// Answers `/private` with 401 unless `X-Api-Key` is present, and records every field name it receives.
    func privateRoute(on server: TestServer) -> Locked<[String]> {
        let names = Locked<[String]>([])
        server.route("/private") { request in
            names.withLock { $0 += request.fields.map(\.name) }
            return request.value(for: "X-Api-Key") == nil ? .response(status: 401) : .text("secret")
        }
        return names
    }

    @Test("I7 an authenticator applying \"a\\r\\nX: y\" fails the request with invalidRequest, and no extra field reaches the server", arguments: TransportUnderTest.allCases)
    func authenticatorValue(transport: TransportUnderTest) async throws {
        let server = try TestServer()
        defer { server.shutdown() }
        await withLeakCheck { leaks in
            let received = privateRoute(on: server)
            let connection = leaks.connection(server, transport)
            connection.authenticate(matching: .everything, with: SplittingAuthenticator())
            let error = await failure { () async throws(HTTPConnectionError) in try await connection.get("/private") }
            #expect(error == .invalidRequest, "\(String(describing: error))")
            #expect(error?.detail?.contains("X-Api-Key") == true, "\(String(describing: error?.detail))")
            let names = received.withLock { $0 }
            #expect(!names.contains("X") && !names.contains("X-Api-Key"), "the server received \(names)")
            #expect(server.requestCount(path: "/private") == 1, "only the first, unauthenticated request is sent")
        }
    }

    @Test("I7 a token request sent through AuthenticationContext with \"a\\r\\nX: y\" in a field fails with invalidRequest, and is not sent", arguments: TransportUnderTest.allCases)
    func tokenRequestValue(transport: TransportUnderTest) async throws {
        let server = try TestServer()
        defer { server.shutdown() }
        await withLeakCheck { leaks in
            _ = privateRoute(on: server)
            let sent = Locked<[HTTPConnectionError]>([])
            let connection = leaks.connection(server, transport)
            connection.authenticate(matching: .everything, with: SplittingTokenRequest(tokenURL: server.url("/token"), sent: sent))
            _ = await failure { () async throws(HTTPConnectionError) in try await connection.get("/private") }
            let errors = sent.withLock { $0 }
            #expect(!errors.isEmpty && errors.allSatisfy { $0 == .invalidRequest }, "\(errors)")
            #expect(server.requestCount(path: "/token") == 0, "the token request reached the server")
        }
    }

    @Test("I7 both transports refuse a method or field name that is not a token, and CR, LF or NUL in a value", arguments: TransportUnderTest.allCases)
    func transportRefuses(transport: TransportUnderTest) async throws {
        let server = try TestServer()
        defer { server.shutdown() }
        try await withLeakCheck { leaks throws in
            leaks.watch(server)
            let sender = leaks.transport(transport)
            let url = server.url("/echo")
            let methods: [HTTPRequest.Method] = ["GE T", "GET\r\nX: y", ""]
            let fields: [HTTPHeaders] = [["X Y": "1"], ["X:Y": "1"], ["X-Token": Self.splitting], ["X-Token": "a\nb"], ["X-Token": "a\rb"],
                                         ["X-Token": "a\u{0}b"]]
            for method in methods {
                let error = await failure { () async throws(HTTPConnectionError) in try await fetch(sender, url, method: method) }
                #expect(error == .invalidRequest && error?.detail?.contains("method") == true, "\(method.rawValue.debugDescription): \(String(describing: error))")
            }
            for headers in fields {
                let error = await failure { () async throws(HTTPConnectionError) in try await fetch(sender, url, headers: headers) }
                #expect(error == .invalidRequest, "\(headers.map { "\($0.name.debugDescription): \($0.value.debugDescription)" }): \(String(describing: error))")
            }
            #expect(server.totalRequests == 0, "the server received \(server.totalRequests) requests")
            #expect(try await fetch(sender, url, headers: ["X-Token": "a b\tc"]).status.code == 200)
        }
    }
}
