import Courier
import CourierTestServer
import Foundation
import Synchronization

/// A test server whose routes set caching headers and count their hits.
///
/// - `/fresh` — `Cache-Control: max-age=60`.
/// - `/etag` — `ETag` of the current version, `Cache-Control: no-cache`; answers 304 to a
///   matching `If-None-Match`.
/// - `/modified` — `Last-Modified`, `max-age=0`; answers 304 to `If-Modified-Since`.
/// - `/vary` — `Vary: Accept-Language`, `max-age=60`, a greeting in that language.
/// - `/no-store` — `Cache-Control: no-store, max-age=60`.
/// - `/public` — `Cache-Control: public, max-age=60`.
/// - `/sized/<n>` — n bytes, `max-age=60`.
final class CacheServer: Sendable {
    let server: TestServer
    let version = Locked(1)
    static let lastModified = "Tue, 15 Nov 1994 12:45:26 GMT"

    init() throws {
        server = try TestServer()
        server.route("/fresh") { _ in .response(status: 200, headers: [("Cache-Control", "max-age=60")], body: Data("fresh".utf8)) }
        server.route("/etag") { [version] request in
            let tag = "\"v\(version.withLock { $0 })\""
            if request.value(for: "If-None-Match") == tag {
                return .response(status: 304, headers: [("ETag", tag), ("X-Revalidated", "yes")])
            }
            return .response(status: 200, headers: [("ETag", tag), ("Cache-Control", "no-cache")],
                             body: Data("body \(tag)".utf8))
        }
        server.route("/modified") { request in
            if request.value(for: "If-Modified-Since") == Self.lastModified { return .response(status: 304) }
            return .response(status: 200, headers: [("Last-Modified", Self.lastModified), ("Cache-Control", "max-age=0")],
                             body: Data("modified".utf8))
        }
        server.route("/vary") { request in
            let language = request.value(for: "Accept-Language") ?? "en"
            return .response(status: 200, headers: [("Vary", "Accept-Language"), ("Cache-Control", "max-age=60")],
                             body: Data((language == "fr" ? "bonjour" : "hello").utf8))
        }
        server.route("/no-store") { _ in .response(status: 200, headers: [("Cache-Control", "no-store, max-age=60")], body: Data("secret".utf8)) }
        server.route("/public") { _ in .response(status: 200, headers: [("Cache-Control", "public, max-age=60")], body: Data("shared".utf8)) }
        server.route("/sized/*") { request in
            let size = Int(request.path.split(separator: "/").last ?? "") ?? 0
            return .response(status: 200, headers: [("Cache-Control", "max-age=60")], body: Data(repeating: 65, count: size))
        }
    }

    func hits(_ path: String) -> Int { server.requestCount(path: path) }
    func shutdown() { server.shutdown() }
}

/// A clock tests move by hand.
final class ManualClock: Sendable {
    private let current = Mutex(Date())  // starts at the real time: servers send real `Date` headers
    var now: Date { current.withLock { $0 } }
    func advance(by seconds: TimeInterval) { current.withLock { $0 = $0.addingTimeInterval(seconds) } }
}
