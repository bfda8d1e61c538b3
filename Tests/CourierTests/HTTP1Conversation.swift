@testable import Courier
import CourierHTTP1
import CourierWire
import CourierTestServer
import Foundation
import Testing

/// One random conversation with ``HTTP1ConnectionStateMachine``: a connection is established,
/// then carries requests one after another while it may be reused. Each response is written
/// here (interim responses, each framing, `Connection: close`, HTTP/1.0) and fed in random
/// pieces; faults are mixed in (garbage, a cut and a close, a write failure, a cancel, a silence
/// past the timeout, a paused stream).
///
/// Checked against what the script knows: every request ends exactly once; a head is delivered
/// once, before any body; a clean response completes with exactly its body, collected, observed
/// or streamed, and is reused exactly when the rules allow; a retry on a fresh connection comes
/// only for a reused connection closed before any response byte, when the request may be sent
/// again; a connection that is not reused stays closed and does nothing more.
struct HTTP1Conversation {
    typealias Machine = HTTP1ConnectionStateMachine
    typealias Action = HTTP1ConnectionStateMachine.Action

    static let second: UInt64 = 1_000_000_000

    /// A response as the script wrote it.
    struct Scripted {
        var wire: [UInt8]
        var status: Int
        var body: [UInt8]
        /// Whether the response allows reuse (HTTP/1.1, no `Connection: close`, not delimited by the close).
        var keepAlive: Bool
        /// Whether only the peer's close ends it.
        var closeDelimited: Bool
    }

    /// What the request's end was.
    enum Outcome: Equatable {
        case complete(status: Int, body: [UInt8], reusable: Bool)
        case failed(String)
        case retry
    }

    var machine: Machine
    var random: SeededRandom
    let label: String
    var now: UInt64 = 0
    var history: [String] = []

    init(seed: UInt64, index: Int) {
        random = SeededRandom(seed: seed, stream: index)
        label = "seed \(seed), conversation \(index)"
        machine = Machine(configuration: .init(origin: "http://example.com:80", usesTLS: Bool.random(using: &random),
                                               connectTimeout: 5 * Self.second, limits: HTTP1Limits(), decompression: true,
                                               maxDecompressedBytes: 1 << 20, maxDecompressionRatio: 100))
    }

    // MARK: The conversation

    mutating func play() {
        guard establish() else { return }
        for index in 0..<Int.random(in: 1...5, using: &random) {
            let outcome = exchange(index)
            note("request \(index): \(outcome)")
            guard case .complete(_, _, true) = outcome else {
                expect(machine.state == .closed, "the connection is \(machine.state) after \(outcome)")
                afterClose()
                return
            }
            expect(machine.isIdle, "a reusable response left the connection \(machine.state)")
        }
    }

    /// Connects (and shakes hands); `false` when establishing failed.
    private mutating func establish() -> Bool {
        expect(describe(machine.start(at: now)) == "connect", "start")
        if Int.random(in: 0..<20, using: &random) == 0 {
            now += 5 * Self.second
            let action = machine.timerFired(at: now)
            expect(describe(action) == "connector timeout", "the connect deadline passed: \(describe(action))")
            let failed = machine.establishmentFailed(.timedOut)
            expect(describe(failed) == "close timedOut", "the connector timed out: \(describe(failed))")
            afterClose()
            return false
        }
        let connected = machine.connected(at: now)
        if machine.configuration.usesTLS {
            expect(describe(connected) == "handshake", "connected over TLS: \(describe(connected))")
            expect(describe(machine.handshakeCompleted(at: now)) == "ready", "the handshake completed")
        } else {
            expect(describe(connected) == "ready", "connected: \(describe(connected))")
        }
        return true
    }

    /// One request and its response, with a fault now and then.
    private mutating func exchange(_ index: Int) -> Outcome {
        let method = ["GET", "GET", "HEAD", "POST"].randomElement(using: &random)!
        let request = Machine.Request(
            method: method, url: URL(string: "http://example.com/\(index)")!, isIdempotent: method != "POST",
            asksClose: Int.random(in: 0..<8, using: &random) == 0, isRetry: false,
            timeout: .seconds(10), maxBodySize: 1 << 20,
            observesBody: Bool.random(using: &random), streamsBody: Int.random(in: 0..<3, using: &random) == 0)
        let scripted = script(for: method)
        let reused = machine.isReused
        let send = machine.requestStarted(request, at: now)
        expect(describe(send) == "send", "requestStarted: \(describe(send))")

        var run = ExchangeRun(request: request)
        let fault = Fault(draw: Int.random(in: 0..<10, using: &random))
        // Where the request's bytes are written in full, among the response's pieces (the server
        // may answer early); a write failure instead with that fault.
        let pieces = cut(scripted.wire)
        let writeAt = Int.random(in: 0...min(pieces.count, 2), using: &random)
        note("\(method) fault \(fault), \(pieces.count) pieces, written before piece \(writeAt), streams \(request.streamsBody), observes \(request.observesBody), asks close \(request.asksClose): \(String(decoding: scripted.wire.prefix(160), as: UTF8.self).replacingOccurrences(of: "\r\n", with: "|"))")
        feeding: for (offset, piece) in pieces.enumerated() {
            if offset == writeAt { write(&run, failing: fault == .writeFailure) }
            if run.outcome != nil { break }
            let half = offset == pieces.count / 2
            switch fault {
            case .closeBeforeAnswer where offset == 0:
                // A server that closes before answering (a stale keep-alive connection).
                closeBeforeEnd(&run)
                break feeding
            case .cancel where half:
                cancel(&run)
                break feeding
            case .silence where half:
                silence(&run)
                break feeding
            case .closeMidway where half:
                closeBeforeEnd(&run)
                break feeding
            case .garbage where half:
                read(&run, Array("XYZ\r\n\u{1}garbage\r\n\r\n".utf8))
                if run.outcome != nil { break feeding }
            default:
                break
            }
            if request.streamsBody, Int.random(in: 0..<6, using: &random) == 0 {
                pauseAndResume(&run)
            }
            now += UInt64.random(in: 0...(Self.second / 10), using: &random)
            read(&run, piece)
        }
        if run.outcome == nil, writeAt >= pieces.count { write(&run, failing: false) }
        if run.outcome == nil, scripted.closeDelimited {
            take(&run, machine.peerClosed(nil))
        }
        if run.outcome == nil {
            // Nothing more comes: the request must end by its timeout.
            silence(&run)
        }
        guard let outcome = run.outcome else {
            expect(false, "request \(index) never ended")
            return .failed("never ended")
        }
        check(outcome, of: run, scripted: scripted, request: request, reused: reused, fault: fault)
        return outcome
    }

    // MARK: Events within an exchange

    /// What goes wrong in an exchange, if anything.
    enum Fault: Equatable {
        case clean, writeFailure, cancel, silence, closeMidway, garbage, closeBeforeAnswer

        /// From a draw in `0..<10`: four in ten exchanges go right.
        init(draw: Int) {
            switch draw {
            case 3: self = .writeFailure
            case 4: self = .cancel
            case 5: self = .silence
            case 6: self = .closeMidway
            case 7: self = .garbage
            case 8: self = .closeBeforeAnswer
            default: self = .clean
            }
        }

        /// Whether it cuts the response short, which ends a close-delimited body where it comes.
        var cutsResponse: Bool { self == .silence || self == .closeMidway || self == .closeBeforeAnswer }
    }

    /// What the script tracks of the request in progress.
    struct ExchangeRun {
        let request: Machine.Request
        var outcome: Outcome?
        var heads = 0
        var delivered: [UInt8] = []
        var written = false
        var responseBytes = false
        var ends = 0
    }

    private mutating func write(_ run: inout ExchangeRun, failing: Bool) {
        guard run.outcome == nil else { return }
        if failing {
            let reset = SocketError(operation: "write", errno: ECONNRESET)
            let action = machine.writeFailed(reset)
            if case .readAfterWriteFailure = action {
                take(&run, machine.writeFailureDrained(reset))
            } else {
                take(&run, action)
            }
            return
        }
        machine.bytesWritten(40, at: now)
        take(&run, machine.allWritten(at: now))
        run.written = true
    }

    private mutating func read(_ run: inout ExchangeRun, _ bytes: [UInt8]) {
        guard run.outcome == nil, !bytes.isEmpty else { return }
        run.responseBytes = true
        var cursor = 0
        for _ in 0..<1_000 {
            let action = bytes.withUnsafeBytes { machine.bytesRead($0, cursor: &cursor, at: now) }
            take(&run, action)
            switch action {
            case .deliverHead, .deliverBody: continue
            default: return
            }
        }
        expect(false, "the machine did not settle on one read")
    }

    private mutating func cancel(_ run: inout ExchangeRun) {
        take(&run, machine.cancel(with: .cancelled))
        expect(run.outcome == .failed(HTTPConnectionError.cancelled.kindName), "a cancel ended the request with \(String(describing: run.outcome))")
    }

    /// Time passes beyond the request's timeout with nothing from the server.
    private mutating func silence(_ run: inout ExchangeRun) {
        for _ in 0..<4 where run.outcome == nil {
            now += 11 * Self.second
            let action = machine.timerFired(at: now)
            if case .none = action, machine.readPaused { take(&run, machine.consumerResumed(at: now)); continue }
            take(&run, action)
        }
    }

    private mutating func closeBeforeEnd(_ run: inout ExchangeRun) {
        take(&run, machine.peerClosed(Bool.random(using: &random) ? nil : SocketError(operation: "read", errno: ECONNRESET)))
    }

    private mutating func pauseAndResume(_ run: inout ExchangeRun) {
        let paused = machine.consumerPaused()
        guard case .stopReading = paused else { return }
        now += 20 * Self.second  // a paused stream does not time out
        let timer = machine.timerFired(at: now)
        expect(describe(timer) == "none", "a paused stream's timer did \(describe(timer))")
        let resumed = machine.consumerResumed(at: now)
        expect(describe(resumed) == "resume", "resuming did \(describe(resumed))")
    }

    /// Takes one action of the machine during a request.
    private mutating func take(_ run: inout ExchangeRun, _ action: Action) {
        switch action {
        case .deliverHead:
            expect(run.outcome == nil && run.heads == 0 && run.delivered.isEmpty, "a head out of turn")
            run.heads += 1
        case .deliverBody(let data, _, _):
            expect(run.outcome == nil && run.heads == 1, "body bytes before the head or after the end")
            expect(!data.isEmpty, "an empty body delivery")
            expect(run.request.streamsBody || run.request.observesBody, "body bytes delivered to a request that collects them")
            run.delivered += data
        case .complete(let response, let reusable):
            run.ends += 1
            let body = run.request.streamsBody ? run.delivered + Array(response.body) : Array(response.body)
            if run.request.observesBody, !run.request.streamsBody {
                expect(run.delivered == body, "the observer saw \(run.delivered.count) bytes of a \(body.count)-byte body")
            }
            run.outcome = .complete(status: response.status.code, body: body, reusable: reusable)
        case .fail(let error):
            run.ends += 1
            run.outcome = .failed(error.kindName)
        case .retryOnFreshConnection:
            run.ends += 1
            run.outcome = .retry
        case .close(let error):
            expect(false, "the connection closed during a request (\(String(describing: error)))")
        case .armTimer(let at), .send(let at), .resumeReading(let at):
            expect(at > now, "a timer armed for the past")
        case .none, .requestWritten, .watchReadable, .stopReading, .readAfterWriteFailure:
            break
        case .startConnecting, .startTunnel, .startHandshake, .reportReady, .timeOutConnector:
            expect(false, "an establishing action during a request: \(describe(action))")
        case .awaitContinue, .sendBody:
            expect(false, "a request without Expect: 100-continue held its body: \(describe(action))")
        }
        expect(run.ends <= 1, "a request ended \(run.ends) times")
    }

    // MARK: Checks

    private mutating func check(_ outcome: Outcome, of run: ExchangeRun, scripted: Scripted, request: Machine.Request,
                                reused: Bool, fault: Fault) {
        switch outcome {
        case .complete(let status, let body, let reusable):
            expect(status == scripted.status, "completed with \(status), the script sent \(scripted.status)")
            expect(run.heads == 1, "completed after \(run.heads) heads")
            if fault == .garbage { break }  // garbage in a body is body bytes to the machine
            if scripted.closeDelimited, fault.cutsResponse {
                // The close ends such a body wherever it comes.
                expect(scripted.body.starts(with: body) && !reusable, "a cut close-delimited body: \(body.count) bytes, reusable \(reusable)")
                break
            }
            expect(body == scripted.body, "completed with \(body.count) bytes, the script sent \(scripted.body.count)")
            let allowed = scripted.keepAlive && run.written && !request.asksClose
            expect(reusable == allowed, "reusable \(reusable), expected \(allowed)")
        case .retry:
            expect(reused && !run.responseBytes && (request.isIdempotent || !run.written),
                   "a retry on a fresh connection: reused \(reused), response bytes \(run.responseBytes), idempotent \(request.isIdempotent), written \(run.written)")
        case .failed(let kind):
            // A clean exchange fails only by its fault.
            expect(fault != .clean, "a clean exchange failed with \(kind)")
        }
    }

    /// A closed connection stays closed: later events do nothing for a request.
    private mutating func afterClose() {
        let events: [Action] = [
            machine.timerFired(at: now + 100 * Self.second),
            Array("HTTP/1.1 200 OK\r\n\r\n".utf8).withUnsafeBytes { bytes in
                var cursor = 0
                return machine.bytesRead(bytes, cursor: &cursor, at: now)
            },
            machine.peerClosed(nil),
            machine.cancel(with: .cancelled),
            machine.allWritten(at: now),
        ]
        for action in events {
            let name = describe(action)
            expect(name == "none" || name == "close" || name == "watch readable", "a closed connection did \(name)")
        }
        expect(machine.state == .closed, "the connection left the closed state")
    }

    // MARK: Scripts

    /// A response to `method`, written out.
    private mutating func script(for method: String) -> Scripted {
        var head = ""
        for _ in 0..<Int.random(in: 0...2, using: &random) {
            head += Bool.random(using: &random) ? "HTTP/1.1 100 Continue\r\n\r\n" : "HTTP/1.1 103 Early Hints\r\nLink: </a>\r\n\r\n"
        }
        let status = [200, 200, 200, 404, 204].randomElement(using: &random)!
        let http10 = Int.random(in: 0..<10, using: &random) == 0
        let asksClose = Int.random(in: 0..<6, using: &random) == 0
        head += "HTTP/\(http10 ? "1.0" : "1.1") \(status) \(status == 200 ? "OK" : status == 204 ? "No Content" : "Not Found")\r\n"
        head += "Server: script\r\n"
        if asksClose { head += "Connection: close\r\n" }
        let hasBody = status != 204 && method != "HEAD"
        let body = hasBody ? (0..<Int.random(in: 0...3_000, using: &random)).map { UInt8(0x61 + $0 % 26) } : []
        var wire = Array(head.utf8)
        var closeDelimited = false
        switch status == 204 ? 0 : Int.random(in: 0..<3, using: &random) {
        case 0:
            wire += Array("Content-Length: \(method == "HEAD" ? 123 : body.count)\r\n\r\n".utf8) + body
        case 1 where !http10:
            wire += Array("Transfer-Encoding: chunked\r\n\r\n".utf8)
            if method == "HEAD" { break }  // the head alone, as for any HEAD response
            var offset = 0
            while offset < body.count {
                let size = min(body.count - offset, Int.random(in: 1...700, using: &random))
                wire += Array("\(String(size, radix: 16))\(Bool.random(using: &random) ? ";ext=1" : "")\r\n".utf8)
                wire += body[offset..<(offset + size)] + Array("\r\n".utf8)
                offset += size
            }
            wire += Array((Bool.random(using: &random) ? "0\r\nX-Trailer: t\r\n\r\n" : "0\r\n\r\n").utf8)
        default:
            if method == "HEAD" {
                wire += Array("\r\n".utf8)
            } else {
                wire += Array("\r\n".utf8) + body
                closeDelimited = true
            }
        }
        return Scripted(wire: wire, status: status, body: body, keepAlive: !http10 && !asksClose && !closeDelimited,
                        closeDelimited: closeDelimited)
    }

    /// `bytes` in random pieces (one byte at a time now and then).
    private mutating func cut(_ bytes: [UInt8]) -> [[UInt8]] {
        var pieces: [[UInt8]] = []
        var offset = 0
        let small = Int.random(in: 0..<8, using: &random) == 0
        while offset < bytes.count {
            let size = min(bytes.count - offset, small ? 1 : Int.random(in: 1...1_500, using: &random))
            pieces.append(Array(bytes[offset..<(offset + size)]))
            offset += size
        }
        return pieces
    }

    // MARK: Helpers

    private mutating func note(_ line: String) {
        history.append(line)
        if history.count > 20 { history.removeFirst() }
    }

    private func describe(_ action: Action) -> String {
        switch action {
        case .none: "none"
        case .startConnecting: "connect"
        case .startTunnel: "tunnel"
        case .startHandshake: "handshake"
        case .reportReady: "ready"
        case .timeOutConnector: "connector timeout"
        case .send: "send"
        case .requestWritten: "written"
        case .watchReadable: "watch readable"
        case .awaitContinue: "await continue"
        case .sendBody: "send body"
        case .readAfterWriteFailure: "read after write failure"
        case .armTimer: "timer"
        case .deliverHead(let head): "head \(head.status.code)"
        case .deliverBody(let data, _, _): "body \(data.count)"
        case .complete(let response, let reusable): "complete \(response.status.code) \(reusable)"
        case .fail(let error): "fail \(error.kindName)"
        case .stopReading: "stop reading"
        case .resumeReading: "resume"
        case .retryOnFreshConnection: "retry"
        case .close(let error): error.map { "close \($0.kindName)" } ?? "close"
        }
    }

    private func expect(_ condition: Bool, _ message: @autoclosure () -> String,
                        sourceLocation: SourceLocation = #_sourceLocation) {
        guard !condition else { return }
        Issue.record("\(label): \(message())\nearlier: \(history.joined(separator: "; "))", sourceLocation: sourceLocation)
    }
}
