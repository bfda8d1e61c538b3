import CourierTestServer
import Foundation
import Synchronization

/// The routes of the benchmark's CourierTestServer: a bearer-token realm for the auth storm, a
/// slow counted GET for the coalescing scenario, and the static files for when nginx is missing. `/delay/<ms>` is built in.
final class BenchRoutes: Sendable {
    private struct Tokens {
        var issued = 0
        var valid: Set<String> = []
    }

    private let tokens = Mutex(Tokens())
    /// Requests `/coalesce/item` has answered.
    private let coalesceRequests = Mutex(0)

    /// Registers every route on `server`.
    /// - Parameters:
    ///   - server: the server.
    ///   - files: the folder of static files, served as `/<name>` (the POST endpoint too).
    func install(on server: TestServer, files: URL?) {
        server.route("/auth/resource") { [self] request in resource(request) }
        server.route("/auth/token") { [self] _ in issueToken() }
        server.route("/auth/stats") { [self] _ in
            .json(#"{"tokens":\#(tokens.withLock { $0.issued })}"#)
        }
        // The coalescing scenario: a GET answered after 200 ms (so that every caller's request
        // overlaps the first), and how many of them reached the server.
        server.route("/coalesce/item") { [self] _ in
            coalesceRequests.withLock { $0 += 1 }
            return .delayed(.milliseconds(200), .response(status: 200, headers: [("Content-Type", "application/json"), ("Cache-Control", "no-store")],
                                                          body: Data(#"{"id":7,"name":"shared"}"#.utf8)))
        }
        server.route("/coalesce/stats") { [self] _ in
            .json(#"{"requests":\#(coalesceRequests.withLock { $0 })}"#)
        }
        server.route("/post") { _ in
            .response(status: 200, headers: [("Content-Type", "application/json"), ("Cache-Control", "no-store")],
                      body: Data(#"{"ok":true}"#.utf8))
        }
        guard let files else { return }
        for (name, cacheControl) in [("small.json", "no-store"), ("cached.json", "max-age=86400"), ("1mib.bin", "no-store")] {
            guard let body = try? Data(contentsOf: files.appendingPathComponent(name)) else { continue }
            let type = name.hasSuffix(".json") ? "application/json" : "application/octet-stream"
            server.route("/" + name) { _ in
                .response(status: 200, headers: [("Content-Type", type), ("Cache-Control", cacheControl)], body: body)
            }
        }
    }

    /// 200 with a small JSON body for a valid bearer token, else 401 with a challenge.
    private func resource(_ request: TestServer.Request) -> TestServer.Reply {
        let authorization = request.value(for: "Authorization") ?? ""
        let token = authorization.hasPrefix("Bearer ") ? String(authorization.dropFirst(7)) : ""
        guard tokens.withLock({ $0.valid.contains(token) }) else {
            return .response(status: 401, headers: [("WWW-Authenticate", #"Bearer realm="bench""#),
                                                    ("Content-Type", "application/json")],
                             body: Data(#"{"error":"unauthorized"}"#.utf8))
        }
        return .json(#"{"ok":true,"resource":"bench"}"#)
    }

    /// Issues a new token and counts it.
    private func issueToken() -> TestServer.Reply {
        let token = tokens.withLock { tokens in
            tokens.issued += 1
            let token = "token-\(tokens.issued)"
            tokens.valid.insert(token)
            return token
        }
        return .json(#"{"access_token":"\#(token)","token_type":"Bearer"}"#)
    }
}
