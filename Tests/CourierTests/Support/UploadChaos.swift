import Courier
import CourierTestServer
import Foundation

/// The seeded random uploads of ``UploadChaosTests``: where each body comes from, what the server
/// does with it the first time it sees it, and whether the client cancels it.
enum UploadChaos {
    /// Where a request body comes from.
    enum Source: Sendable, Equatable, CustomStringConvertible {
        /// `HTTPRequest.Body.data`: in memory, sent again as needed.
        case data
        /// `HTTPRequest.Body.file`: read as it is sent, sent again as needed.
        case file
        /// `HTTPRequest.Body.stream` of chunks of 0 to `largestChunk` octets (a ``TrackedChunks``),
        /// with its length or without (chunked on HTTP/1.1): read once.
        case stream(knownLength: Bool, largestChunk: Int)

        var isReplayable: Bool { if case .stream = self { false } else { true } }

        var description: String {
            switch self {
            case .data: "data"
            case .file: "file"
            case .stream(let known, let largest): "stream\(known ? " with its length" : "") in chunks up to \(largest)"
            }
        }
    }

    /// What the server does the first time it sees a request; it stores every later one.
    enum Fault: Sendable, Equatable, CustomStringConvertible {
        /// Reads the whole body and answers `200` with ``Upload/answer``.
        case store
        /// As ``store``, reading slowly and holding still a while at `pauseAt`, where it checks
        /// how far the client read its body source ahead of what arrived.
        case slowRead(pauseAt: Int)
        /// Answers `status` (with `early <path>` as its body) after `at` body octets, then closes
        /// (HTTP/1.1) or sends RST_STREAM(NO_ERROR) (HTTP/2) when `thenCloses`, or else goes on
        /// reading and discards the rest.
        case early(status: Int, at: Int, thenCloses: Bool)
        /// After `at` body octets: HTTP/1.1 closes the connection (FIN); HTTP/2 resets the stream
        /// (RST_STREAM(INTERNAL_ERROR)).
        case cut(at: Int)
        /// After `at` body octets: HTTP/1.1 resets the connection (RST); HTTP/2 drops it.
        case drop(at: Int)
        /// After `at` body octets, reads nothing more and never answers (HTTP/2: gives no
        /// window back); the request's short timeout must end it.
        case stall(at: Int)
        /// HTTP/2: RST_STREAM(REFUSED_STREAM) after `at` body octets.
        case refuse(at: Int)
        /// HTTP/2: GOAWAY with the stream below this one as the last (once per connection), after
        /// `at` body octets; streams above it are not processed.
        case goAway(at: Int)

        /// Where the fault strikes, in body octets.
        var at: Int? {
            switch self {
            case .store, .slowRead: nil
            case .early(_, let at, _), .cut(let at), .drop(let at), .stall(let at), .refuse(let at), .goAway(let at): at
            }
        }

        var description: String {
            switch self {
            case .store: "stores"
            case .slowRead(let at): "reads slowly, pausing at \(at)"
            case .early(let status, let at, let closes): "answers \(status) at \(at)\(closes ? " and closes" : " and drains")"
            case .cut(let at): "cuts at \(at)"
            case .drop(let at): "drops at \(at)"
            case .stall(let at): "stalls at \(at)"
            case .refuse(let at): "refuses at \(at)"
            case .goAway(let at): "sends GOAWAY below it at \(at)"
            }
        }
    }

    /// One upload of a conversation.
    struct Upload: Sendable, CustomStringConvertible {
        /// Its body's place in ``StreamingChaos/pattern``.
        let index: Int
        let path: String
        let method: HTTPRequest.Method
        let size: Int
        let source: Source
        /// Sent with `Expect: 100-continue` (Courier does not wait for `100`; the server sends one).
        let expectsContinue: Bool
        let fault: Fault
        /// The client cancels it this long after it started.
        let cancelAfter: Duration?
        /// What the body source was asked for.
        let log = SourceLog()

        /// Whether the native transport holds the body back for `100 Continue` on HTTP/1.1: the
        /// field is set and there is a body to hold (a stream of unknown length may have one).
        var holdsBodyForContinue: Bool {
            guard expectsContinue else { return false }
            if case .stream(false, _) = source { return true }
            return size > 0
        }

        /// The request's timeout: short for a stalled upload, so that the test stays fast.
        var timeout: Duration { if case .stall = fault { .seconds(1) } else { .seconds(10) } }

        /// The body's octets.
        var bytes: Data { Data(StreamingChaos.bytes(index, 0..<size)) }

        /// What the server answers once it stored the whole body.
        var answer: String { Self.answer(path: path, body: bytes) }

        /// What the server answers to a body it stored: the path, its length and its SHA-256.
        static func answer(path: String, body: Data) -> String { "\(path) \(body.count) \(sha256Hex(body))" }

        /// The body of an early answer.
        var earlyAnswer: String { "early \(path)" }

        var description: String {
            "\(path): \(method.rawValue) \(size) octets from \(source)\(expectsContinue ? ", Expect: 100-continue" : ""); the server \(fault)"
                + (cancelAfter.map { ", the client cancels after \($0)" } ?? "")
        }

        /// The request, its body made afresh from ``source`` (`file` is the body's file, when it is one).
        func request(file: URL?) throws -> HTTPRequest {
            let body: HTTPRequest.Body
            switch source {
            case .data:
                body = .data(bytes)
            case .file:
                body = try .file(file!)
            case .stream(let known, let largest):
                let chunks = TrackedChunks(index: index, size: size, largestChunk: largest, seed: UInt64(index), log: log)
                body = .stream(chunks, length: known ? Int64(size) : nil)
            }
            var request = HTTPRequest(method, path, body: body)
            request.timeout = timeout
            if expectsContinue { request.headers.set("100-continue", for: "Expect") }
            return request
        }
    }

    /// The largest body.
    static let maxSize = 3 << 20

    /// Plans upload `index` of a conversation at random; `http2` allows the HTTP/2 faults,
    /// `urlSession` keeps to what libcurl can be judged on.
    static func plan(_ random: inout SeededRandom, conversation: Int, index: Int, http2: Bool, urlSession: Bool = false) -> Upload {
        func below(_ bound: Int) -> Int { bound <= 0 ? 0 : Int(random.next() % UInt64(bound)) }
        var size = switch below(8) {
        case 0: below(2) == 0 ? 0 : below(1_000)
        case 1, 2, 3: below(256 << 10)
        default: below(maxSize)
        }
        var source: Source = switch below(5) {
        case 0: .data
        case 1: .file
        default: .stream(knownLength: below(2) == 0, largestChunk: size < 4_000 ? 1 : [4_000, 64 << 10, 600 << 10][below(3)])
        }
        let at = below(size + 1)
        var fault: Fault = switch below(20) {
        case 0..<5: .store
        case 5, 6: .slowRead(pauseAt: at)
        case 7, 8, 9: .early(status: [413, 401, 200][below(3)], at: at, thenCloses: below(2) == 0)
        case 10, 11: .cut(at: at)
        case 12, 13: .drop(at: at)
        case 14: .stall(at: at)
        case 15, 16: http2 ? .refuse(at: at) : .store
        default: http2 ? .goAway(at: at) : .slowRead(pauseAt: at)
        }
        if urlSession, case .stall = fault { fault = .store }  // libcurl's timeouts are its own
        // FoundationNetworking crashes the process when a file upload's transfer ends before the
        // file was read to its end (`_BodyFileSource` unpauses a finished curl handle: a `try!` on
        // error 43), so a file goes to URLSession only for a server that reads it all.
        if urlSession, source == .file, fault.at != nil { fault = .store }
        if case .stream(let known, let largest) = source, !urlSession {
            // A stream the server holds back is long, and held back early: far more than the
            // client may read ahead remains (on HTTP/1.1 more than the sockets' buffers hold too).
            switch fault {
            case .slowRead, .stall:
                size = http2 ? maxSize : StreamingChaos.maxSize - below(1 << 20)
                source = .stream(knownLength: known, largestChunk: max(largest, 4_000))
                let at = below(size / 8)
                fault = if case .stall = fault { .stall(at: at) } else { .slowRead(pauseAt: at) }
            default:
                break
            }
        }
        if case .early(let status, _, let closes) = fault, !http2, !urlSession {
            // An early answer on HTTP/1.1 comes while the body is still going out only when more
            // of it remains than the sockets' buffers take.
            size = StreamingChaos.maxSize - below(1 << 20)
            fault = .early(status: status, at: below(size / 8), thenCloses: closes)
            if case .stream(let known, let largest) = source { source = .stream(knownLength: known, largestChunk: max(largest, 4_000)) }
        }
        let cancelAfter: Duration? = below(10) == 0 ? .milliseconds(below(30)) : nil
        return Upload(index: conversation * 16 + index, path: "/up/c\(conversation)/u\(index)", method: below(2) == 0 ? .post : .put,
                      size: size, source: source, expectsContinue: below(4) == 0, fault: fault, cancelAfter: cancelAfter)
    }
}

/// What a body source (``TrackedChunks``) was asked for: how often it was iterated, the octets it
/// yielded, and the reads that began after its request had ended.
final class SourceLog: Sendable {
    private struct State {
        var iterations = 0
        var yielded = 0
        var ended = false
        var readsAfterEnd = 0
    }

    private let state = Locked(State())

    /// How many times the sequence was iterated.
    var iterations: Int { state.withLock { $0.iterations } }
    /// The octets it yielded.
    var yielded: Int { state.withLock { $0.yielded } }
    /// The `next()` calls that began after ``requestEnded()``.
    var readsAfterEnd: Int { state.withLock { $0.readsAfterEnd } }

    /// Blocks the calling thread (a server's, holding back) until the source stops yielding:
    /// unchanged for 60 ms, after at least 100 ms and at most 2 s. A client that keeps reading
    /// ahead is seen far ahead then, however slowly it reads.
    func settle() {
        let clock = ContinuousClock()
        let start = clock.now
        var last = yielded
        var since = start
        while clock.now < start + .seconds(2) {
            usleep(5_000)
            let now = yielded
            if now != last {
                (last, since) = (now, clock.now)
            } else if clock.now >= since + .milliseconds(60), clock.now >= start + .milliseconds(100) {
                return
            }
        }
    }

    /// The request's terminal callback ran.
    func requestEnded() { state.withLock { $0.ended = true } }

    fileprivate func began() { state.withLock { $0.iterations += 1 } }

    fileprivate func reading() { state.withLock { if $0.ended { $0.readsAfterEnd += 1 } } }

    fileprivate func yielded(_ count: Int) { state.withLock { $0.yielded += count } }
}

/// A body of `size` octets of ``StreamingChaos`` body `index`, in chunks of seeded random sizes
/// from 0 to `largestChunk`, telling a ``SourceLog`` what it is asked for.
struct TrackedChunks: AsyncSequence, Sendable {
    typealias Element = Data

    let index: Int
    let size: Int
    let largestChunk: Int
    let seed: UInt64
    let log: SourceLog

    struct AsyncIterator: AsyncIteratorProtocol {
        let chunks: TrackedChunks
        var random: SeededRandom
        var offset = 0

        mutating func next() async -> Data? {
            chunks.log.reading()
            guard offset < chunks.size else { return nil }
            let count = Swift.min(Int(random.next() % UInt64(chunks.largestChunk + 1)), chunks.size - offset)
            let chunk = Data(StreamingChaos.bytes(chunks.index, offset..<(offset + count)))
            offset += count
            chunks.log.yielded(count)
            return chunk
        }
    }

    func makeAsyncIterator() -> AsyncIterator {
        log.began()
        return AsyncIterator(chunks: self, random: SeededRandom(seed: seed))
    }
}
