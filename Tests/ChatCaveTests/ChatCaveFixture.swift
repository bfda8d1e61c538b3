import ChatCave
import ChatCaveServer
import Courier
import Foundation

/// A reference server (cheap password hashing) and a native transport for the services of
/// one test; both are stopped when the fixture goes.
final class ChatCaveFixture {
    let server: ChatCaveServer
    let transport: NativeTransport

    init() throws {
        server = try ChatCaveServer(port: 0, configuration: .init(passwordIterations: 1_000))
        transport = NativeTransport()
    }

    deinit {
        transport.shutdown()
        server.shutdown()
    }

    /// A service for the fixture's server.
    func service(scheme: ChatCaveService.AuthenticationScheme = .apiKey, queue: DispatchQueue? = nil) -> ChatCaveService {
        ChatCaveService(serverURL: server.baseURL, configuration: .init(authenticationScheme: scheme, callbackQueue: queue,
                                                                         timeout: .seconds(10), transport: transport))
    }

    /// A service for any URL, on the fixture's transport.
    func service(for url: URL) -> ChatCaveService {
        ChatCaveService(serverURL: url, configuration: .init(timeout: .seconds(5), transport: transport))
    }

    /// A signed-up service.
    func signedUp(_ name: String, password: String = "pw") async throws -> ChatCaveService {
        let service = service()
        try await service.signUp(name: name, password: password)
        return service
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

/// Waits, for at most `timeout`, until `condition` holds.
func eventually(timeout: Duration = .seconds(30), _ condition: () -> Bool) async -> Bool {
    let deadline = ContinuousClock.now + timeout
    while ContinuousClock.now < deadline {
        if condition() { return true }
        try? await Task.sleep(for: .milliseconds(10))
    }
    return condition()
}
