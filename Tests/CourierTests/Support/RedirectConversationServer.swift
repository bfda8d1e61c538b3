import Courier
import CourierTestServer
import Foundation

/// The origins of ``RedirectConversationTests``: two ``TestServer``s on 127.0.0.1 port 0 (the
/// first also reached as `localhost`, another origin) and, when asked for, a ``TLSOriginServer``
/// with a test certificate. Every one of them answers `/rc/<id>/<step>/x` (`?s=<step>` wins over
/// the path's step) as the script of request `id` says for that step, and logs what it was sent
/// as a ``RedirectConversationModel/Visit``, so that a test can compare each request's hops with
/// the model's.
final class RedirectConversationServer: Sendable {
    typealias Origin = RedirectConversation.Origin
    typealias Answer = RedirectConversation.Answer

    /// The base origin's server (also the `localhost` origin).
    let base: TestServer
    /// The second plain origin's server.
    let other: TestServer
    /// The https origin's server and the CA that signed its certificate, when made.
    private let secure: (server: TLSOriginServer, certificates: TestCertificates)?
    /// Each request's script, by id.
    private let scripts = Locked<[Int: [Answer]]>([:])
    /// What each request's hops sent, by id, in the order they arrived.
    private let visits = Locked<[Int: [RedirectConversationModel.Visit]]>([:])

    /// Starts the servers; the https one only when `secure` (it needs the openssl tool).
    init(secure: Bool) async throws {
        base = try TestServer()
        other = try TestServer()
        let reference = WeakReference<RedirectConversationServer>()
        if secure {
            let certificates = try await TestCertificates.make()
            let tls = try ServerTLSContext(certificate: certificates.valid.certificate, key: certificates.valid.key)
            let server = try TLSOriginServer(tls: tls) { head, body in
                reference.value?.answerTLS(head: head, body: body) ?? Array("HTTP/1.1 503 Gone\r\nContent-Length: 0\r\n\r\n".utf8)
            }
            self.secure = (server, certificates)
        } else {
            self.secure = nil
        }
        reference.value = self
        for (server, origins) in [(base, (Origin.base, Origin.baseByName)), (other, (Origin.other, Origin.other))] {
            server.route("/rc/*") { request in
                guard let self = reference.value else { return .response(status: 503) }
                let byName = request.value(for: "Host")?.lowercased().hasPrefix("localhost") ?? false
                return self.answer(request.method, request.path, request.query, request.fields, request.body,
                                   at: byName ? origins.1 : origins.0)
            }
        }
    }

    /// The ports of the origins other than the base one, whose client sockets must all be closed at the end.
    var otherPorts: [Int] { [other.port] + (secure.map { [$0.server.port] } ?? []) }

    /// The CA certificate (PEM) a client must trust for the https origin; `nil` without one.
    var caPEM: Data? { secure?.certificates.caPEM }

    /// Stops every server and removes the certificates.
    func shutdown() {
        base.shutdown()
        other.shutdown()
        secure?.server.stop()
        secure?.certificates.remove()
    }

    /// Gives the servers the scripts of `calls`.
    func load(_ calls: [RedirectConversation.Call]) {
        scripts.withLock { scripts in
            for call in calls { scripts[call.id] = call.answers }
        }
    }

    /// What request `id`'s hops sent, in order.
    func visits(of id: Int) -> [RedirectConversationModel.Visit] {
        visits.withLock { $0[id] ?? [] }
    }

    /// The URL of `place` for request `id`, as a string.
    func url(_ place: RedirectConversation.Place, id: Int) -> String {
        "\(scheme(place.origin))://\(authority(place.origin))\(place.path(id: id))\(place.queryStep.map { "?s=\($0)" } ?? "")"
    }

    private func scheme(_ origin: Origin) -> String { origin.isSecure ? "https" : "http" }

    /// `host:port` of `origin`.
    private func authority(_ origin: Origin) -> String {
        switch origin {
        case .base: "127.0.0.1:\(base.port)"
        case .baseByName: "localhost:\(base.port)"
        case .other: "127.0.0.1:\(other.port)"
        case .secure: "127.0.0.1:\(secure?.server.port ?? 1)"
        }
    }

    /// The `Location` of a redirect to `step` on `target`, written the `form` way.
    private func location(id: Int, step: Int, target: Origin, form: RedirectConversation.Form, fragment: String?) -> String {
        let path = "/rc/\(id)/\(step)/x"
        let written = switch form {
        case .absolute: "\(scheme(target))://\(authority(target))\(path)"
        case .shouting: "\(scheme(target).uppercased())://\(authority(target).uppercased())\(path)"
        case .absolutePath: path
        case .dotDot: "../\(step)/x"
        case .query: "?s=\(step)"
        case .schemeRelative: "//\(authority(target))\(path)"
        }
        return written + (fragment.map { "#\($0)" } ?? "")
    }

    /// Logs one request and gives its answer: status, fields, body and how long to wait first.
    private func answer(_ method: String, _ path: String, _ query: String, _ fields: [(name: String, value: String)], _ body: Data,
                        at origin: Origin) -> TestServer.Reply {
        let parts = path.split(separator: "/")
        guard parts.count == 4, let id = Int(parts[1]), let pathStep = Int(parts[2]) else { return .response(status: 404) }
        let queryStep = query.split(separator: "&").first { $0.hasPrefix("s=") }.flatMap { Int($0.dropFirst(2)) }
        let place = RedirectConversation.Place(origin: origin, pathStep: pathStep, queryStep: queryStep)
        let field = { (name: String) in fields.first { $0.name.lowercased() == name.lowercased() }?.value }
        let credentials = RedirectConversation.credentialFields(id: id).compactMap { name, value in
            field(name).map { $0 == value ? name : "\(name)=\($0)" }
        }
        let visit = RedirectConversationModel.Visit(
            place: place, method: method, body: body, contentType: field("Content-Type") != nil, credentials: credentials,
            defaultHeader: field(RedirectConversation.defaultHeader.name) == RedirectConversation.defaultHeader.value,
            hooked: field("X-Hooked"), custom: field("X-Custom") == "c\(id)")
        visits.withLock { $0[id, default: []].append(visit) }
        guard let script = scripts.withLock({ $0[id] }), place.step < script.count else { return .response(status: 404) }
        switch script[place.step] {
        case .ok(let delay):
            let echo = TestServer.Reply.json(["id": "\(id)", "step": "\(place.step)", "method": method])
            return delay.map { .delayed($0, echo) } ?? echo
        case .redirect(let status, let step, let target, let form, let fragment):
            return .response(status: status, headers: [("Location", location(id: id, step: step, target: target, form: form, fragment: fragment))],
                             body: Self.page(place))
        case .noLocation(let status):
            return .response(status: status, body: Self.page(place))
        case .unusable(let status, let location):
            return .response(status: status, headers: [("Location", location)], body: Self.page(place))
        }
    }

    /// The body of a redirect answer, as servers send one: 0 to 2,000 bytes, so that a
    /// connection reused after a redirect must have read it whole.
    private static func page(_ place: RedirectConversation.Place) -> Data {
        Data(String(repeating: "moved ", count: (place.pathStep * 7 + (place.queryStep ?? 0) * 13) % 334).utf8)
    }

    /// Answers a request to the https origin as ``answer(_:_:_:_:_:at:)`` does, as the bytes of a
    /// whole response (waiting on this connection's thread for a slow one).
    private func answerTLS(head: String, body: [UInt8]) -> [UInt8] {
        let lines = head.split(separator: "\r\n").map(String.init)
        let requestLine = lines.first?.split(separator: " ").map(String.init) ?? []
        guard requestLine.count == 3 else { return Array("HTTP/1.1 400 Bad\r\nContent-Length: 0\r\n\r\n".utf8) }
        let method = requestLine[0]
        let target = requestLine[1].split(separator: "?", maxSplits: 1, omittingEmptySubsequences: false).map(String.init)
        let fields = lines.dropFirst().compactMap { line -> (name: String, value: String)? in
            let parts = line.split(separator: ":", maxSplits: 1)
            return parts.count == 2 ? (String(parts[0]), parts[1].trimmingCharacters(in: .whitespaces)) : nil
        }
        var reply = answer(method, target[0], target.count > 1 ? target[1] : "", fields, Data(body), at: .secure)
        if case .delayed(let delay, let later) = reply {
            Thread.sleep(forTimeInterval: Double(delay.components.seconds) + Double(delay.components.attoseconds) / 1e18)
            reply = later
        }
        guard case .response(let status, let headers, let content) = reply else {
            return Array("HTTP/1.1 500 Unexpected\r\nContent-Length: 0\r\n\r\n".utf8)
        }
        let sent = method == "HEAD" ? Data() : content
        let text = "HTTP/1.1 \(status) Scripted\r\n" + headers.map { "\($0.0): \($0.1)\r\n" }.joined()
            + "Content-Length: \(content.count)\r\n\r\n"
        return Array(text.utf8) + Array(sent)
    }
}
