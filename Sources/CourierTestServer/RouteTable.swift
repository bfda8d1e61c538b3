import Synchronization

/// The custom routes of a ``TestServer``: exact paths and `*` prefixes.
final class RouteTable: Sendable {
    private struct Routes {
        var exact: [String: TestServer.Handler] = [:]
        /// Longest prefix first.
        var prefixes: [(prefix: String, handler: TestServer.Handler)] = []
    }

    private let routes = Mutex(Routes())

    func add(_ path: String, _ handler: @escaping TestServer.Handler) {
        routes.withLock { routes in
            if path.hasSuffix("*") {
                let prefix = String(path.dropLast())
                routes.prefixes.removeAll { $0.prefix == prefix }
                routes.prefixes.append((prefix, handler))
                routes.prefixes.sort { $0.prefix.count > $1.prefix.count }
            } else {
                routes.exact[path] = handler
            }
        }
    }

    /// The handler for `path`: an exact match, else the longest matching prefix.
    func handler(for path: String) -> TestServer.Handler? {
        routes.withLock { routes in
            if let exact = routes.exact[path] { return exact }
            return routes.prefixes.first { path.hasPrefix($0.prefix) }?.handler
        }
    }
}
