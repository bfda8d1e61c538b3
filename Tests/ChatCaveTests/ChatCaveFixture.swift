@testable import ChatCave
import ChatCaveServer
import Courier
import CourierTestSupport
import Foundation
import Testing

/// The client side of one test: a native transport (shut down when the fixture goes) and the
/// services made on it, each registered with the test's ``LeakCheck`` together with its
/// `HTTPConnection` and authentication hooks. Made by ``withChatCave(watching:sourceLocation:_:)``.
final class ChatCaveFixture: Sendable {
    let server: ChatCaveServer
    let transport: NativeTransport
    let leaks: LeakCheck

    init(server: ChatCaveServer, leaks: LeakCheck) {
        self.server = server
        self.leaks = leaks
        transport = leaks.track(NativeTransport())
    }

    deinit {
        transport.shutdown()
    }

    /// A service for the fixture's server.
    func service(scheme: ChatCaveService.AuthenticationScheme = .apiKey, queue: DispatchQueue? = nil) -> ChatCaveService {
        tracked(ChatCaveService(serverURL: server.baseURL, configuration: .init(authenticationScheme: scheme, callbackQueue: queue,
                                                                                timeout: .seconds(10), transport: transport)))
    }

    /// A service for any URL, on the fixture's transport.
    func service(for url: URL) -> ChatCaveService {
        tracked(ChatCaveService(serverURL: url, configuration: .init(timeout: .seconds(5), transport: transport)))
    }

    /// A signed-up service.
    func signedUp(_ name: String, password: String = "pw") async throws -> ChatCaveService {
        let service = service()
        try await service.signUp(name: name, password: password)
        return service
    }

    /// Registers a service and the objects it owns with the leak check.
    private func tracked(_ service: ChatCaveService) -> ChatCaveService {
        leaks.track(service.connection)
        leaks.track(service.hooks)
        return leaks.track(service)
    }
}

/// Starts a reference server (cheap password hashing), runs `body` under a ``LeakCheck`` with
/// a fixture for that server, then stops the server. The check watches the server's port and `ports`.
/// - Parameters:
///   - ports: other servers' ports the test talks to (servers it created before this call).
///   - body: the test.
/// - Returns: what `body` returns.
/// - Throws: when the server cannot start, or what `body` throws.
func withChatCave<Result>(watching ports: Int..., sourceLocation: SourceLocation = #_sourceLocation,
                          _ body: (ChatCaveFixture) async throws -> Result) async throws -> Result {
    let server = try ChatCaveServer(port: 0, configuration: .init(passwordIterations: 1_000))
    defer { server.shutdown() }
    return try await withLeakCheck(watching: [server.port] + ports, sourceLocation: sourceLocation) { leaks in
        try await body(leaks.track(ChatCaveFixture(server: server, leaks: leaks)))
    }
}

/// Runs an operation and returns its ``ChatCaveError``, or `nil` when it succeeded.
/// Any other error is returned as ``ChatCaveError/invalidResponse(_:)`` naming it, so that a test fails.
func failure<T>(_ operation: () async throws -> T) async -> ChatCaveError? {
    do {
        _ = try await operation()
        return nil
    } catch let error as ChatCaveError {
        return error
    } catch {
        return .invalidResponse("not a ChatCaveError: \(error)")
    }
}

