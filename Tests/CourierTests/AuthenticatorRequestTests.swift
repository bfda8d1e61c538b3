import Courier
import CourierTestServer
import CourierTestSupport
import Foundation
import Synchronization
import Testing

/// Authenticators at the request level: a refresh sends an `HTTPRequest` resolved against the
/// connection's base URL, and an app that owns its credential supplies it through
/// `credentialToSend(stored:)`.
@Suite("Authenticators with HTTPRequest")
struct AuthenticatorRequestTests {
    /// Signs in with a relative `PUT account` carrying a form body, and applies `X-Key`.
    struct FormSignIn: Authenticator {
        func apply(_ credential: Credential, to request: inout TransportRequest) {
            request.headers.set(credential.secret, for: "X-Key")
        }

        func refresh(previous: Credential?, context: AuthenticationContext) async throws -> Credential {
            let response = try await context.send(HTTPRequest(.put, "/account", query: [.init("via", "refresh")],
                                                              body: .form(["user[name]": "alice", "user[password]": "pw"])))
            guard response.status.code == 201, let key = response.text else {
                throw HTTPConnectionError.authenticationFailed
            }
            return Credential(user: "alice", secret: key)
        }
    }

    /// A session the app signs in to and out of itself; the authenticator reads it live.
    final class AppSession: Sendable {
        let key = Mutex<String?>(nil)
    }

    struct LiveSession: Authenticator {
        let session: AppSession
        func credentialToSend(stored: Credential?) -> Credential? {
            session.key.withLock { $0 }.map { Credential(secret: $0) }
        }
        func apply(_ credential: Credential, to request: inout TransportRequest) {
            request.headers.set(credential.secret, for: "X-Key")
        }
        func refresh(previous: Credential?, context: AuthenticationContext) async throws -> Credential {
            let response = try await context.send(HTTPRequest(.post, "/sign-in"))
            let key = response.text ?? ""
            session.key.withLock { $0 = key }
            return Credential(secret: key)
        }
    }

    @Test("a refresh's HTTPRequest is resolved against the connection's base URL, with its query and form body",
          arguments: TransportUnderTest.allCases)
    func refreshResolvedAgainstBase(transport: TransportUnderTest) async throws {
        let server = try TestServer()
        defer { server.shutdown() }
        let seen = Mutex<[String]>([])
        server.route("/api/account") { request in
            seen.withLock { $0.append("\(request.method) \(request.path)?\(request.query) \(request.value(for: "Content-Type") ?? "-") \(String(decoding: request.body, as: UTF8.self))") }
            return .response(status: 201, body: Data("key-7".utf8))
        }
        server.route("/api/rooms") { request in
            request.value(for: "X-Key") == "key-7" ? .json("[]") : .response(status: 401)
        }
        try await withLeakCheck { leaks throws in
            leaks.watch(server)
            let connection = leaks.track(HTTPConnection(baseURL: server.url("/api"),
                                                        configuration: .init(timeout: .seconds(10), transport: leaks.transport(transport))))
            connection.authenticate(matching: .prefix(server.url("/api").absoluteString), with: FormSignIn())
            #expect(try await connection.get("/rooms").text == "[]")
            #expect(seen.withLock { $0 } == [
                "PUT /api/account?via=refresh application/x-www-form-urlencoded user%5Bname%5D=alice&user%5Bpassword%5D=pw",
            ])
        }
    }

    @Test("a refresh request that cannot be sent fails the refresh with its error, and nothing reaches the server")
    func refreshRequestInvalid() async throws {
        final class Seen: Sendable {
            let error = Mutex<HTTPConnectionError?>(nil)
        }
        struct BadTarget: Authenticator {
            let seen: Seen
            func apply(_ credential: Credential, to request: inout TransportRequest) {}
            func refresh(previous: Credential?, context: AuthenticationContext) async throws -> Credential {
                do throws(HTTPConnectionError) {
                    _ = try await context.send(HTTPRequest(.post, "/token", body: .json(RequestErgonomicsTests.Unencodable())))
                } catch {
                    seen.error.withLock { $0 = error }
                    throw error
                }
                return Credential(secret: "never")
            }
        }
        let server = try TestServer()
        defer { server.shutdown() }
        server.route("/private") { _ in .response(status: 401) }
        let authenticator = BadTarget(seen: Seen())
        let connection = HTTPConnection(baseURL: server.baseURL)
        connection.authenticate(matching: .everything, with: authenticator)
        await #expect(throws: HTTPConnectionError.unacceptableStatus) { _ = try await connection.get("/private") }
        #expect(authenticator.seen.error.withLock { $0 } == .invalidBody)
        #expect(server.requestCount(path: "/token") == 0)
    }

    @Test("an app-owned credential is applied from the first request, follows the app's sign-in and sign-out, and a 401 still refreshes once",
          arguments: TransportUnderTest.allCases)
    func appOwnedCredential(transport: TransportUnderTest) async throws {
        let server = try TestServer()
        defer { server.shutdown() }
        let valid = Mutex<Set<String>>(["app-key", "new-key"])
        server.route("/sign-in") { _ in .text("new-key") }
        server.route("/me") { request in
            guard let key = request.value(for: "X-Key") else { return .text("anonymous") }
            return valid.withLock { $0.contains(key) } ? .text(key) : .response(status: 401)
        }
        try await withLeakCheck { leaks throws in
            let connection = leaks.connection(server, transport)
            let session = AppSession()
            connection.authenticate(matching: .everything, with: LiveSession(session: session))

            #expect(try await connection.get("/me").text == "anonymous")        // signed out: no field
            session.key.withLock { $0 = "app-key" }                              // the app signs in
            #expect(try await connection.get("/me").text == "app-key")          // used at once, no refresh
            #expect(server.requestCount(path: "/sign-in") == 0)

            valid.withLock { _ = $0.remove("app-key") }                          // the server revokes it
            #expect(try await connection.get("/me").text == "new-key")          // one refresh, then resent
            #expect(server.requestCount(path: "/sign-in") == 1)

            session.key.withLock { $0 = nil }                                    // the app signs out
            #expect(try await connection.get("/me").text == "anonymous")        // the refreshed key is not sent
        }
    }
}
