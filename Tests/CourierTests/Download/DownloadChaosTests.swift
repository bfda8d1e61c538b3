@testable import Courier
import CourierTestServer
import Foundation
import Testing

/// Downloads with resume, again and again, against a resource that changes and a server that
/// cuts answers off, ignores ranges, answers another range than asked, fails, or drops its
/// validators: each conversation retries one download until it completes (at most 8 attempts).
///
/// A model of what the partial file must hold after each attempt (``PartialModel``) says what the
/// next attempt must ask for: `Range: bytes=<held>-` with the `If-Range` of the version it holds,
/// or no range at all. Whatever happened, the destination must not exist until a download
/// completes, and then hold exactly the version the last answer served: never a prefix of one
/// version spliced with the rest of another. Each attempt must end once, with the error its fault
/// calls for.
@Suite("Downloads: random conversations with a changing resource")
struct DownloadChaosTests {
    /// What the server does with one attempt.
    enum Step: Sendable, CustomStringConvertible {
        /// Serves the current version as asked (honouring `Range` and `If-Range`), cut off after
        /// that share of what it announced when given.
        case serve(cut: Double?)
        /// The resource changes first (a new `ETag`, another length), then as ``serve(cut:)``.
        case change(cut: Double?)
        /// Ignores `Range`: the whole current version, `200`, cut off when given.
        case ignoreRange(cut: Double?)
        /// A `206` whose `Content-Range` starts one byte later than asked (only to a resume).
        case wrongRange
        /// A `500`.
        case fail
        /// The whole current version without `ETag` or `Last-Modified`, cut off at that share.
        case noValidators(cut: Double)

        var description: String {
            switch self {
            case .serve(let cut): "serve\(cut.map { " cut \(Int($0 * 100))%" } ?? "")"
            case .change(let cut): "change\(cut.map { " cut \(Int($0 * 100))%" } ?? "")"
            case .ignoreRange(let cut): "ignore range\(cut.map { " cut \(Int($0 * 100))%" } ?? "")"
            case .wrongRange: "wrong range"
            case .fail: "500"
            case .noValidators(let cut): "no validators cut \(Int(cut * 100))%"
            }
        }
    }

    /// One version of the resource.
    struct Version: Sendable {
        let number: Int
        let body: Data
        var etag: String { "\"v\(number)\"" }
        var lastModified: String { "Sun, 06 Nov 1994 08:\(String(format: "%02d", number % 60)):37 GMT" }

        init(_ number: Int, size: Int) {
            self.number = number
            var body = TestServer.rangedBody(count: size)
            for index in body.indices { body[index] ^= UInt8(truncatingIfNeeded: number &* 37) }
            self.body = body
        }
    }

    /// What the partial file holds after an attempt, by the documented rules: the bytes it has and
    /// the validator of the version they belong to (`nil`: no record, so no resume).
    struct PartialModel: Equatable, CustomStringConvertible {
        var bytes = 0
        var etag: String?
        var description: String { "\(bytes) bytes of \(etag ?? "no validator")" }
    }

    /// One attempt as the server saw it.
    struct Attempt: Sendable {
        let step: Step
        let range: String?
        let ifRange: String?
        /// The status it answered, the body bytes it sent, and the version served.
        let status: Int, sent: Int, version: Int
        /// Whether the answer carried validators.
        let validators: Bool
    }

    /// The server's side of one conversation: the current version and the planned steps.
    final class Resource: Sendable {
        struct State: Sendable {
            var version: Version
            var steps: [Step]
            var attempts: [Attempt] = []
        }
        let state: Locked<State>
        let sizes: [Int]

        init(steps: [Step], sizes: [Int]) {
            self.sizes = sizes
            state = Locked(State(version: Version(1, size: sizes[0]), steps: steps))
        }

        func reply(_ request: TestServer.Request) -> TestServer.Reply {
            state.withLock { state in
                let step = state.attempts.count < state.steps.count ? state.steps[state.attempts.count] : .serve(cut: nil)
                if case .change = step {
                    let next = state.version.number + 1
                    state.version = Version(next, size: sizes[next % sizes.count])
                }
                let version = state.version
                let range = request.value(for: "Range"), ifRange = request.value(for: "If-Range")
                func record(_ status: Int, _ sent: Int, _ validators: Bool) {
                    state.attempts.append(Attempt(step: step, range: range, ifRange: ifRange, status: status, sent: sent,
                                                  version: version.number, validators: validators))
                }
                switch step {
                case .serve(let cut), .change(let cut):
                    let ranged = TestServer.rangedReply(request, body: version.body, etag: version.etag,
                                                        lastModified: version.lastModified, cutAt: cut)
                    record(ranged.status, ranged.bodyBytes, true)
                    return ranged.reply
                case .ignoreRange(let cut):
                    let (reply, sent) = Self.whole(version, validators: true, cut: cut)
                    record(200, sent, true)
                    return reply
                case .wrongRange where range == nil:
                    let (reply, sent) = Self.whole(version, validators: true, cut: nil)
                    record(200, sent, true)
                    return reply
                case .wrongRange:
                    let first = range.flatMap { Int($0.dropFirst("bytes=".count).dropLast()) } ?? 0
                    let start = min(first + 1, version.body.count - 1)
                    let slice = version.body[start...]
                    record(206, slice.count, true)
                    return .response(status: 206, headers: [("ETag", version.etag), ("Last-Modified", version.lastModified),
                                                           ("Content-Range", "bytes \(start)-\(version.body.count - 1)/\(version.body.count)")],
                                     body: Data(slice))
                case .fail:
                    record(500, 0, false)
                    return .response(status: 500)
                case .noValidators(let cut):
                    let (reply, sent) = Self.whole(version, validators: false, cut: cut)
                    record(200, sent, false)
                    return reply
                }
            }
        }

        /// The whole version, `200`, whatever the request asked: with or without its validators,
        /// cut off after that share of it when given. Returns the reply and the body bytes it sends.
        static func whole(_ version: Version, validators: Bool, cut: Double?) -> (TestServer.Reply, Int) {
            var head = "HTTP/1.1 200 OK\r\nContent-Length: \(version.body.count)\r\n"
            if validators { head += "ETag: \(version.etag)\r\nLast-Modified: \(version.lastModified)\r\n" }
            var wire = Data((head + "\r\n").utf8)
            let sent = cut.map { Int(Double(version.body.count) * $0) } ?? version.body.count
            wire.append(version.body.prefix(sent))
            return (.script(cut == nil ? [.send(wire)] : [.send(wire), .close]), sent)
        }
    }

    @Test("16 conversations of up to 8 resumed attempts: each asks for exactly what its partial file lacks, and the file that completes is one version whole",
          arguments: TransportUnderTest.allCases)
    func randomConversations(_ transport: TransportUnderTest) async throws {
        let seed = SeededRandom.seed(default: 0x5EED_0005_0401)
        let server = try TestServer()
        defer { server.shutdown() }
        let folder = try DownloadTests.Folder()
        defer { folder.remove() }
        let resources = Locked<[String: Resource]>([:])
        server.route("/dl/*") { request in
            guard let resource = resources.withLock({ $0[request.path] }) else { return .response(status: 404) }
            return resource.reply(request)
        }
        var met = (resumed: 0, restarted: 0, changed: 0, mismatched: 0, completed: 0)
        for conversation in 0..<16 {
            var random = SeededRandom(seed: seed, stream: conversation)
            let context = "conversation \(conversation), \(SeededRandom(seed: seed).replayHint)"
            let cut = { (random: inout SeededRandom) in 0.1 + Double(random.next() % 80) / 100 }
            // The first answer is cut, so that the next attempt has something to resume.
            let steps: [Step] = [.serve(cut: cut(&random))] + (1..<7).map { _ in
                switch random.next() % 12 {
                case 0..<4: .serve(cut: cut(&random))
                case 4..<6: .change(cut: random.next() % 2 == 0 ? cut(&random) : nil)
                case 6: .ignoreRange(cut: random.next() % 2 == 0 ? cut(&random) : nil)
                case 7..<9: .wrongRange
                case 9: .fail
                case 10: .noValidators(cut: cut(&random))
                default: .serve(cut: nil)
                }
            }
            let sizes = (0..<4).map { _ in 40_000 + Int(random.next() % 200_000) }
            let resource = Resource(steps: steps, sizes: sizes)
            let path = "/dl/c\(conversation)"
            resources.withLock { $0[path] = resource }
            let destination = folder.file("c\(conversation).bin")
            let connection = HTTPConnection(baseURL: server.baseURL, configuration: .init(timeout: .seconds(20), retryPolicy: .never,
                                                                                          transport: transport.make(), cache: nil))
            var partial = PartialModel()
            var story: [String] = []
            for attempt in 0..<8 {
                let expectedDigest = random.next() % 3 == 0 ? sha256Hex(resource.state.withLock { $0.version.body }) : nil
                let outcome: Result<DownloadResult, HTTPConnectionError>
                do throws(HTTPConnectionError) {
                    outcome = .success(try await connection.download(HTTPRequest(.get, path), to: destination,
                                                                     options: DownloadOptions(resume: true, expectedSHA256: expectedDigest)))
                } catch {
                    outcome = .failure(error)
                }
                let seen = resource.state.withLock { $0.attempts }
                guard seen.count == attempt + 1, let served = seen.last else {
                    Issue.record("attempt \(attempt) reached the server \(seen.count - attempt) times: \(story); \(context)")
                    break
                }
                let current = resource.state.withLock { $0.version }
                story.append("\(served.step) asked \(served.range ?? "all")\(served.ifRange.map { " if \($0)" } ?? "") → \(served.status) \(served.sent) B v\(served.version): \(outcome.map(\.byteCount))")
                let history = "attempt \(attempt) with \(partial) held; \(story.joined(separator: "; ")); \(context)"

                // The request asks for exactly what the partial file lacks, of the version it holds.
                if let etag = partial.etag, partial.bytes > 0 {
                    #expect(served.range == "bytes=\(partial.bytes)-" && served.ifRange == etag, "\(history)")
                } else {
                    #expect(served.range == nil, "a request without a resumable partial file asked for a range: \(history)")
                }
                // The partial file's next state, and what the attempt must end with.
                let whole = current.body
                let fresh = served.status == 200
                let held = fresh ? 0 : partial.bytes
                var expected: HTTPConnectionError?
                switch served.step {
                case .wrongRange where served.range != nil:
                    expected = .rangeMismatch
                case .fail:
                    expected = .unacceptableStatus
                default:
                    let announced = fresh ? whole.count : whole.count - held
                    if served.sent < announced {
                        expected = .connectionLost
                        partial = PartialModel(bytes: held + served.sent, etag: served.validators ? current.etag : nil)
                    } else if let expectedDigest, expectedDigest != sha256Hex(whole) {
                        expected = .checksumMismatch
                        partial = PartialModel()
                    } else {
                        expected = nil
                    }
                }
                if fresh, held == 0, partial.bytes > 0, served.status == 206 { Issue.record("model: \(history)") }
                if served.range != nil { met.resumed += 1 }
                if served.range != nil, fresh { met.restarted += 1 }
                if case .change = served.step { met.changed += 1 }
                if expected == .rangeMismatch { met.mismatched += 1 }

                switch outcome {
                case .success(let result):
                    #expect(expected == nil, "the download completed where it should have failed with \(expected.map(\.kindName) ?? "-"): \(history)")
                    let file = try? Data(contentsOf: destination)
                    #expect(file == whole, "the file is not version \(current.number) whole (\(file?.count ?? -1) of \(whole.count) bytes): \(history)")
                    #expect(result.byteCount == Int64(whole.count), "\(history)")
                    #expect(folder.names.filter { $0.hasPrefix(".c\(conversation).") }.isEmpty, "a partial file stayed: \(history)")
                    met.completed += 1
                case .failure(let error):
                    #expect(error == expected, "the attempt failed with \(error.kindName), not \(expected.map(\.kindName) ?? "success"): \(history)")
                    #expect(!FileManager.default.fileExists(atPath: destination.path), "the destination appeared incomplete: \(history)")
                }
                if case .success = outcome { break }
            }
            try? FileManager.default.removeItem(at: destination)
        }
        #expect(met.resumed > 0 && met.restarted > 0 && met.changed > 0 && met.mismatched > 0 && met.completed > 0,
                "the conversations missed a situation: \(met)")
    }
}
