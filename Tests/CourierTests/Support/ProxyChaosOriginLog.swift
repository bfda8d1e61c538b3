import Foundation

/// What the proxy chaos test's origins received, by path: each request's method and body in the
/// order they arrived, so that a test can count how often a request reached the origin and check
/// its body. A test can also mark a path whose next arrival the origin leaves unanswered, closing
/// its connection, as an origin does whose keep-alive connection expired just as a request came.
final class ProxyChaosOriginLog: Sendable {
    /// One request as the origin received it.
    struct Arrival: Sendable, Equatable {
        /// The request method.
        let method: String
        /// The request body (empty when it had none).
        let body: Data
    }

    /// The arrivals by path, and the paths whose next arrival is dropped.
    private struct State {
        var arrivals: [String: [Arrival]] = [:]
        var dropping: Set<String> = []
    }

    private let state = Locked(State())

    /// Makes the origin close its connection, unanswered, when the next request for `path` arrives.
    func dropNextArrival(at path: String) {
        state.withLock { _ = $0.dropping.insert(path) }
    }

    /// Records that a request for `path` arrived with `method` and `body`.
    /// - Returns: whether the origin answers it (`false`: it closes the connection unanswered).
    func arrive(method: String, path: String, body: Data) -> Bool {
        state.withLock { state in
            state.arrivals[path, default: []].append(Arrival(method: method, body: body))
            return state.dropping.remove(path) == nil
        }
    }

    /// The requests for `path` that arrived so far, in order.
    func arrivals(at path: String) -> [Arrival] {
        state.withLock { $0.arrivals[path] ?? [] }
    }
}
