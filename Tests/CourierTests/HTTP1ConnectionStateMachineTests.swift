@testable import Courier
import CourierHTTP1
import CourierWire
import Foundation
import Testing

/// The HTTP/1.1 connection state machine on a virtual clock: byte strings in, actions out, no
/// sockets, threads or sleeps. Times are plain nanosecond numbers.
@Suite("HTTP/1.1 connection state machine")
struct HTTP1ConnectionStateMachineTests {
    typealias Machine = HTTP1ConnectionStateMachine
    typealias Action = HTTP1ConnectionStateMachine.Action

    static let second: UInt64 = 1_000_000_000
    static let timeout = 10 * second
    static let origin = "http://example.com:80"

    /// A machine and what it last answered, driven like ``HTTP1ClientConnection`` drives it.
    struct Rig {
        var machine: Machine
        /// The response of the last `complete`, if any.
        var response: HTTPResponse?
        /// The error of the last `fail` or establishment `close`, if any.
        var error: HTTPConnectionError?

        /// A machine for a plain (or TLS) connection with the given limits.
        init(tls: Bool = false, decompression: Bool = true, maxDecompressedBytes: Int = 1 << 20) {
            machine = Machine(configuration: .init(
                origin: HTTP1ConnectionStateMachineTests.origin, usesTLS: tls, connectTimeout: 5 * HTTP1ConnectionStateMachineTests.second,
                limits: HTTP1Limits(), decompression: decompression, maxDecompressedBytes: maxDecompressedBytes,
                maxDecompressionRatio: 100))
        }

        /// Connects (and shakes hands) at time 0: the machine is then idle.
        static func ready(tls: Bool = false) -> Rig {
            var rig = Rig(tls: tls)
            _ = rig.machine.start(at: 0)
            _ = rig.machine.connected(at: 0)
            if tls { _ = rig.machine.handshakeCompleted(at: 0) }
            return rig
        }

        /// Records and describes one action.
        mutating func note(_ action: Action) -> String {
            switch action {
            case .complete(let response, _): self.response = response
            case .fail(let error): self.error = error
            case .close(let error?): self.error = error
            default: break
            }
            return HTTP1ConnectionStateMachineTests.describe(action)
        }

        /// Starts `request` at `now` and writes it whole at `writtenAt`.
        mutating func send(_ request: Machine.Request = HTTP1ConnectionStateMachineTests.get(), at now: UInt64 = 0, writtenAt: UInt64? = nil) {
            #expect(HTTP1ConnectionStateMachineTests.describe(machine.requestStarted(request, at: now)) == "send timer@\(now + request.timeoutNanoseconds)")
            machine.bytesWritten(40, at: writtenAt ?? now)
            #expect(HTTP1ConnectionStateMachineTests.describe(machine.allWritten(at: writtenAt ?? now)) == "written")
        }

        /// Feeds `bytes` as one read at `now`, performing like the driver: the actions until `.none`
        /// or one that ends the request.
        mutating func read(_ bytes: [UInt8], at now: UInt64 = 0) -> [String] {
            var seen: [String] = []
            var cursor = 0
            for _ in 0..<100 {
                let action = bytes.withUnsafeBytes { machine.bytesRead($0, cursor: &cursor, at: now) }
                if case .none = action { return seen }
                seen.append(note(action))
                switch action {
                case .deliverHead, .deliverBody, .sendBody: continue  // the driver writes the body after the read
                default: return seen
                }
            }
            Issue.record("the machine did not settle")
            return seen
        }

        /// Feeds a string as one read.
        mutating func read(_ text: String, at now: UInt64 = 0) -> [String] {
            read(Array(text.utf8), at: now)
        }

        /// Feeds each byte of `text` as its own read.
        mutating func trickle(_ text: String, at now: UInt64 = 0) -> [String] {
            Array(text.utf8).flatMap { read([$0], at: now) }
        }
    }

    /// A request as the machine sees it.
    static func get(_ method: String = "GET", idempotent: Bool = true, asksClose: Bool = false, isRetry: Bool = false,
                    maxBody: Int = 1 << 20, observes: Bool = false, streams: Bool = false,
                    expectsContinue: Bool = false) -> Machine.Request {
        Machine.Request(method: method, url: URL(string: "http://example.com/")!, isIdempotent: idempotent, asksClose: asksClose,
                        isRetry: isRetry, timeout: .seconds(10), maxBodySize: maxBody, observesBody: observes,
                        streamsBody: streams, expectsContinue: expectsContinue)
    }

    /// A short, comparable name of an action.
    static func describe(_ action: Action) -> String {
        switch action {
        case .none: return "none"
        case .startConnecting(let timerAt): return "connect timer@\(timerAt)"
        case .startTunnel: return "tunnel"
        case .startHandshake: return "handshake"
        case .reportReady: return "ready"
        case .timeOutConnector: return "connector timeout"
        case .send(let timerAt): return "send timer@\(timerAt)"
        case .requestWritten: return "written"
        case .watchReadable: return "watch readable"
        case .awaitContinue(let timerAt): return "await continue timer@\(timerAt)"
        case .sendBody(let timerAt): return "send body timer@\(timerAt)"
        case .readAfterWriteFailure: return "read after write failure"
        case .armTimer(let deadline): return "timer@\(deadline)"
        case .deliverHead(let head): return "head \(head.status.code)"
        case .deliverBody(let data, let soFar, let expected):
            return "body \(String(decoding: data, as: UTF8.self)) \(soFar)/\(expected.map { "\($0)" } ?? "?")"
        case .complete(let response, let reusable):
            return "complete \(response.status.code) '\(String(decoding: response.body, as: UTF8.self))' \(reusable ? "reuse" : "close")"
        case .fail(let error): return "fail \(error.kindName)"
        case .stopReading: return "stop reading"
        case .resumeReading(let timerAt): return "resume reading timer@\(timerAt)"
        case .retryOnFreshConnection: return "retry"
        case .close(let error): return error.map { "close \($0.kindName)" } ?? "close"
        }
    }

    /// A short, comparable name of an action.
    func describe(_ action: Action) -> String { Self.describe(action) }

    // MARK: - Establishing

    @Test("plain: start arms the connect timer; connected makes the connection ready and idle")
    func plainEstablishment() {
        var rig = Rig()
        #expect(describe(rig.machine.start(at: 7)) == "connect timer@\(7 + 5 * Self.second)")
        #expect(rig.machine.state == .connecting(deadline: 7 + 5 * Self.second))
        #expect(describe(rig.machine.connected(at: 9)) == "ready")
        #expect(rig.machine.isIdle && !rig.machine.isReused)
    }

    @Test("TLS: connected starts the handshake; its completion makes the connection ready")
    func tlsEstablishment() {
        var rig = Rig(tls: true)
        _ = rig.machine.start(at: 0)
        #expect(describe(rig.machine.connected(at: 1)) == "handshake")
        #expect(!rig.machine.isEstablished)
        #expect(describe(rig.machine.handshakeCompleted(at: 2)) == "ready")
        #expect(rig.machine.isIdle)
    }

    @Test("connect deadline: an early tick re-arms; at the deadline the connector times out, and its failure closes")
    func connectTimeout() {
        var rig = Rig()
        _ = rig.machine.start(at: 0)
        #expect(describe(rig.machine.timerFired(at: Self.second)) == "timer@\(5 * Self.second)")
        #expect(describe(rig.machine.timerFired(at: 5 * Self.second)) == "connector timeout")
        #expect(rig.note(rig.machine.establishmentFailed(.timedOut)) == "close timedOut")
        #expect(rig.machine.state == .closed)
        #expect(describe(rig.machine.timerFired(at: 6 * Self.second)) == "none")
    }

    @Test("handshake deadline: the handshake fails with timedOut and the established wording")
    func handshakeTimeout() {
        var rig = Rig(tls: true)
        _ = rig.machine.start(at: 0)
        _ = rig.machine.connected(at: 1)
        #expect(describe(rig.machine.timerFired(at: 2)) == "timer@\(5 * Self.second)")
        #expect(rig.note(rig.machine.timerFired(at: 5 * Self.second)) == "close timedOut")
        #expect(rig.error?.detail == "the TLS handshake with \(Self.origin) timed out after 5.0 seconds")
    }

    @Test("close while connecting reports that it closed while connecting; a second close does nothing")
    func closeWhileConnecting() {
        var rig = Rig()
        _ = rig.machine.start(at: 0)
        #expect(rig.note(rig.machine.close()) == "close cannotConnect")
        #expect(rig.error?.detail == "closed while connecting to \(Self.origin)")
        #expect(describe(rig.machine.close()) == "none")
    }

    // MARK: - Bodies and reuse

    @Test("Content-Length: head, then the body; the connection is reused and the request's phases run in order")
    func contentLength() {
        var rig = Rig.ready()
        #expect(describe(rig.machine.requestStarted(Self.get(), at: 0)) == "send timer@\(Self.timeout)")
        #expect(rig.machine.state == .busy(.sending))
        rig.machine.bytesWritten(10, at: 1)
        #expect(rig.machine.bytesSent == 10)
        #expect(describe(rig.machine.allWritten(at: 1)) == "written")
        #expect(rig.machine.state == .busy(.awaitingHead))
        #expect(rig.read("HTTP/1.1 200 OK\r\nContent-Length: 5\r\n\r\nhe") == ["head 200"])
        #expect(rig.machine.state == .busy(.receivingBody))
        #expect(rig.read("llo") == ["complete 200 'hello' reuse"])
        #expect(rig.machine.isIdle && rig.machine.isReused && rig.machine.body.wireBytes == 5)
        #expect(rig.response?.headers["Content-Length"] == "5")
    }

    @Test("body bytes go to the observer, with progress against the declared length, only when it asks for them")
    func observedBody() {
        var rig = Rig.ready()
        rig.send(Self.get(observes: true))
        #expect(rig.read("HTTP/1.1 200 OK\r\nContent-Length: 5\r\n\r\nhe") == ["head 200", "body he 2/5"])
        #expect(rig.read("llo") == ["body llo 5/5", "complete 200 'hello' reuse"])
        rig.send(Self.get(observes: false))
        #expect(rig.read("HTTP/1.1 200 OK\r\nContent-Length: 5\r\n\r\nhello") == ["head 200", "complete 200 'hello' reuse"])
    }

    @Test("chunked: decoded across reads, one observer callback per read, the connection reused")
    func chunked() {
        var rig = Rig.ready()
        rig.send(Self.get(observes: true))
        #expect(rig.read("HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n3\r\nabc\r\n2\r\nde") == ["head 200", "body abcde 5/?"])
        #expect(rig.read("\r\n0\r\n\r\n") == ["complete 200 'abcde' reuse"])
    }

    @Test("close-delimited: the body ends when the peer closes, and the connection is not reused")
    func closeDelimited() {
        var rig = Rig.ready()
        rig.send()
        #expect(rig.read("HTTP/1.1 200 OK\r\n\r\nsome") == ["head 200"])
        #expect(rig.read(" body") == [])
        #expect(rig.note(rig.machine.peerClosed(nil)) == "complete 200 'some body' close")
        #expect(rig.machine.state == .closed)
    }

    @Test("HEAD, 204 and 304 have no body whatever Content-Length says; the connection is reused",
          arguments: [("HEAD", 200), ("GET", 204), ("GET", 304)])
    func noBody(method: String, status: Int) {
        var rig = Rig.ready()
        rig.send(Self.get(method))
        #expect(rig.read("HTTP/1.1 \(status) X\r\nContent-Length: 10\r\n\r\n") == ["head \(status)", "complete \(status) '' reuse"])
        #expect(rig.machine.isIdle)
    }

    @Test("keep-alive: not reused after Connection: close, HTTP/1.0, a caller's Connection: close, chunked with Content-Length, or extra bytes",
          arguments: [
              ("HTTP/1.1 200 OK\r\nConnection: close\r\nContent-Length: 1\r\n\r\nx", false),
              ("HTTP/1.0 200 OK\r\nContent-Length: 1\r\n\r\nx", false),
              ("HTTP/1.1 200 OK\r\nContent-Length: 1\r\n\r\nx", true),
              ("HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\nContent-Length: 1\r\n\r\n1\r\nx\r\n0\r\n\r\n", false),
              ("HTTP/1.1 200 OK\r\nContent-Length: 1\r\n\r\nxHTTP/1.1 200 OK\r\n", false),
          ])
    func keepAlive(response: String, reusable: Bool) {
        var rig = Rig.ready()
        rig.send()
        #expect(rig.read(response).last == "complete 200 'x' \(reusable ? "reuse" : "close")")
        var asking = Rig.ready()
        asking.send(Self.get(asksClose: true))
        #expect(asking.read(response).last == "complete 200 'x' close")
    }

    @Test("a gzip body is decoded; a body past the decompression limit fails with decompressionFailed")
    func decompression() {
        let plain = Data(repeating: 0x61, count: 3000)
        let gzip = gzipCompressed(plain)
        var rig = Rig.ready()
        rig.send()
        let actions = rig.read(Array("HTTP/1.1 200 OK\r\nContent-Encoding: gzip\r\nContent-Length: \(gzip.count)\r\n\r\n".utf8) + gzip)
        #expect(actions == ["head 200", "complete 200 '\(String(repeating: "a", count: 3000))' reuse"])
        #expect(rig.machine.body.wireBytes == gzip.count)
        var limited = Rig(maxDecompressedBytes: 1000)
        _ = limited.machine.start(at: 0)
        _ = limited.machine.connected(at: 0)
        limited.send()
        #expect(limited.read(Array("HTTP/1.1 200 OK\r\nContent-Encoding: gzip\r\nContent-Length: \(gzip.count)\r\n\r\n".utf8) + gzip)
                == ["head 200", "fail decompressionFailed"])
    }

    // MARK: - Limits

    @Test("body limit: a declared length over it fails at the head; a streamed body fails once past it")
    func bodyLimit() {
        var declared = Rig.ready()
        declared.send(Self.get(maxBody: 4))
        #expect(declared.read("HTTP/1.1 200 OK\r\nContent-Length: 5\r\n\r\n") == ["fail bodyTooLarge"])
        #expect(declared.error?.detail == "the declared length 5 exceeds the limit of 4 bytes")
        var streamed = Rig.ready()
        streamed.send(Self.get(maxBody: 4))
        #expect(streamed.read("HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n3\r\nabc\r\n") == ["head 200"])
        #expect(streamed.read("3\r\ndef\r\n") == ["fail bodyTooLarge"])
        #expect(streamed.error?.detail == "the body exceeds the limit of 4 bytes")
        #expect(streamed.machine.state == .closed)
    }

    @Test("framed-body limit: chunk padding cannot stretch a body within the limit beyond the limit plus 1 MiB on the wire")
    func framedBodyLimit() {
        #expect(Machine.framedBodyLimit(1000) == 1000 + (1 << 20))
        #expect(Machine.framedBodyLimit(4 << 20) == 8 << 20)
        #expect(Machine.framedBodyLimit(.max) == .max)
        var rig = Rig.ready()
        rig.send(Self.get(maxBody: 1000))
        #expect(rig.read("HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n") == ["head 200"])
        let padded = "1;pad=\(String(repeating: "p", count: 3600))\r\nx\r\n"
        var outcome: [String] = []
        for _ in 0..<400 where outcome.isEmpty { outcome = rig.read(padded) }
        #expect(outcome == ["fail bodyTooLarge"])
        #expect(rig.error?.detail == "the body with its chunk framing exceeds \(1000 + (1 << 20)) bytes on the wire")
    }

    @Test("1xx: interim responses are skipped, up to ten; the eleventh fails with badResponse")
    func interimLimit() {
        var rig = Rig.ready()
        rig.send()
        let interim = String(repeating: "HTTP/1.1 100 Continue\r\n\r\n", count: 10)
        #expect(rig.read(interim + "HTTP/1.1 200 OK\r\nContent-Length: 0\r\n\r\n") == ["head 200", "complete 200 '' reuse"])
        rig.send()
        #expect(rig.read(interim + "HTTP/1.1 103 Early Hints\r\n\r\n") == ["fail badResponse"])
        #expect(rig.error?.detail == "more than 10 interim (1xx) responses before the final one")
    }

    @Test("101 Switching Protocols is rejected")
    func switchingProtocols() {
        var rig = Rig.ready()
        rig.send()
        #expect(rig.read("HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\n\r\n") == ["fail badResponse"])
        #expect(rig.error?.detail == "unexpected 101 Switching Protocols")
    }

    @Test("a malformed status line fails with badResponse; an oversized head with headTooLarge")
    func malformedHead() {
        var bad = Rig.ready()
        bad.send()
        #expect(bad.read("HTTX/1.1 200 OK\r\n\r\n") == ["fail badResponse"])
        var large = Rig.ready()
        large.send()
        #expect(large.read("HTTP/1.1 200 OK\r\nX: \(String(repeating: "a", count: 70_000))\r\n\r\n") == ["fail headTooLarge"])
    }

    // MARK: - Timeouts

    @Test("race: timeout against data — a timer that fires after written bytes moved the deadline re-arms instead of failing")
    func writesExtendDeadline() {
        var rig = Rig.ready()
        _ = rig.machine.requestStarted(Self.get(), at: 0)
        rig.machine.bytesWritten(10, at: 4 * Self.second)
        #expect(describe(rig.machine.timerFired(at: Self.timeout)) == "timer@\(14 * Self.second)")
        _ = rig.machine.allWritten(at: 6 * Self.second)
        #expect(describe(rig.machine.timerFired(at: 14 * Self.second)) == "fail timedOut")
    }

    @Test("a head trickling in byte by byte does not extend the head deadline; interim responses do not either")
    func headTrickle() {
        var rig = Rig.ready()
        rig.send(at: 0, writtenAt: Self.second)
        #expect(rig.read("HTTP/1.1 100 Continue\r\n\r\n", at: 2 * Self.second) == [])
        #expect(rig.trickle("HTTP/1.1 200 OK\r\nContent-Len", at: 9 * Self.second) == [])
        #expect(rig.note(rig.machine.timerFired(at: 11 * Self.second)) == "fail timedOut")
        #expect(rig.error?.detail == "no complete response head came from \(Self.origin) within 10.0 seconds of sending")
    }

    @Test("in the body only payload bytes are progress: chunk framing alone lets the request time out")
    func chunkFramingIsNotProgress() {
        var rig = Rig.ready()
        rig.send()
        #expect(rig.read("HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n", at: Self.second) == ["head 200"])
        #expect(rig.read("2\r\nab\r\n", at: 3 * Self.second) == [])
        #expect(describe(rig.machine.timerFired(at: Self.timeout)) == "timer@\(13 * Self.second)")
        #expect(rig.read("1;ext=framing-only", at: 12 * Self.second) == [])
        #expect(rig.note(rig.machine.timerFired(at: 13 * Self.second)) == "fail timedOut")
        #expect(rig.error?.detail == "no body bytes came from \(Self.origin) for 10.0 seconds")
    }

    @Test("a timer that fires after the response completed does nothing")
    func timerAfterCompletion() {
        var rig = Rig.ready()
        rig.send()
        _ = rig.read("HTTP/1.1 200 OK\r\nContent-Length: 0\r\n\r\n")
        #expect(describe(rig.machine.timerFired(at: 100 * Self.second)) == "none")
    }

    // MARK: - Cancellation and closing

    @Test("race: cancel against response — a cancel that arrives after completion does nothing")
    func cancelAfterCompletion() {
        var rig = Rig.ready()
        rig.send()
        _ = rig.read("HTTP/1.1 200 OK\r\nContent-Length: 0\r\n\r\n")
        #expect(describe(rig.machine.cancel(with: .cancelled)) == "none")
        #expect(rig.machine.isIdle)
    }

    @Test("cancel in the middle of the body fails the request with cancelled and closes the connection")
    func cancelMidBody() {
        var rig = Rig.ready()
        rig.send()
        _ = rig.read("HTTP/1.1 200 OK\r\nContent-Length: 10\r\n\r\nabc")
        #expect(describe(rig.machine.cancel(with: .cancelled)) == "fail cancelled")
        #expect(rig.machine.state == .closed)
        #expect(rig.read("defghij") == [])
    }

    @Test("race: close against request — closing a busy connection fails its request; an idle one just closes")
    func closeAgainstRequest() {
        var busy = Rig.ready()
        busy.send()
        #expect(busy.note(busy.machine.close(failing: NativeErrors.shutDown)) == "fail cancelled")
        #expect(busy.error?.detail == "the transport was shut down")
        var plain = Rig.ready()
        plain.send()
        #expect(plain.note(plain.machine.close()) == "fail connectionLost")
        #expect(plain.error?.detail == "the connection to \(Self.origin) closed")
        var idle = Rig.ready()
        #expect(describe(idle.machine.close(failing: NativeErrors.shutDown)) == "close")
    }

    @Test("unsolicited bytes on an idle connection close it; so does the peer closing it")
    func idleConnection() {
        var rig = Rig.ready()
        #expect(rig.read("HTTP/1.1 200 OK\r\n\r\n") == ["close"])
        #expect(rig.machine.state == .closed)
        var closed = Rig.ready()
        #expect(describe(closed.machine.peerClosed(nil)) == "close")
    }

    // MARK: - Stale connections

    /// A rig whose connection already completed one response.
    static func reused() -> Rig {
        var rig = Rig.ready()
        rig.send()
        _ = rig.read("HTTP/1.1 200 OK\r\nContent-Length: 0\r\n\r\n")
        return rig
    }

    @Test("race: stale connection against send — a reused connection closed before any response byte retries a GET once")
    func staleRetry() {
        var rig = Self.reused()
        rig.send(Self.get())
        #expect(describe(rig.machine.peerClosed(nil)) == "retry")
        #expect(rig.machine.state == .closed)
    }

    @Test("the second stale close of the same request fails with staleConnection")
    func staleTwice() {
        var rig = Self.reused()
        rig.send(Self.get(isRetry: true))
        #expect(rig.note(rig.machine.peerClosed(nil)) == "fail staleConnection")
        #expect(rig.error?.detail == "\(Self.origin) closed the pooled connection; GET is not safe to repeat")
    }

    @Test("a POST with bytes sent is not repeated (staleConnection); one with nothing sent is")
    func stalePost() {
        var sent = Self.reused()
        sent.send(Self.get("POST", idempotent: false))
        #expect(sent.note(sent.machine.peerClosed(nil)) == "fail staleConnection")
        #expect(sent.error?.detail == "\(Self.origin) closed the pooled connection; POST is not safe to repeat")
        var unsent = Self.reused()
        _ = unsent.machine.requestStarted(Self.get("POST", idempotent: false), at: 0)
        #expect(describe(unsent.machine.peerClosed(nil)) == "retry")
    }

    @Test("on a fresh connection a close before any response byte is connectionLost, never a retry")
    func freshClose() {
        var rig = Rig.ready()
        rig.send()
        #expect(rig.note(rig.machine.peerClosed(nil)) == "fail connectionLost")
        #expect(rig.error?.detail == "\(Self.origin) closed the connection without answering")
    }

    @Test("a close in the middle of the head, of a body with an error, or of a Content-Length body is connectionLost")
    func closeMidResponse() {
        var head = Self.reused()
        head.send()
        _ = head.read("HTTP/1.1 200")
        #expect(head.note(head.machine.peerClosed(nil)) == "fail connectionLost")
        #expect(head.error?.detail == "the server closed the connection in the middle of the response head")
        var broken = Rig.ready()
        broken.send()
        _ = broken.read("HTTP/1.1 200 OK\r\n\r\nabc")
        #expect(broken.note(broken.machine.peerClosed(SocketError(operation: "recv", errno: 104))) == "fail connectionLost")
        #expect(broken.error?.detail == "the connection broke in the middle of the body")
        var truncated = Rig.ready()
        truncated.send()
        _ = truncated.read("HTTP/1.1 200 OK\r\nContent-Length: 9\r\n\r\nabc")
        #expect(truncated.note(truncated.machine.peerClosed(nil)) == "fail connectionLost")
    }

    // MARK: - Early responses and write failures

    @Test("an early response while still sending (a 413) is delivered, the rest is not written, and the connection is not reused")
    func earlyResponse() {
        var rig = Rig.ready()
        _ = rig.machine.requestStarted(Self.get("POST", idempotent: false), at: 0)
        rig.machine.bytesWritten(100, at: 0)
        #expect(rig.read("HTTP/1.1 413 Content Too Large\r\nContent-Length: 4\r\n\r\n") == ["head 413"])
        #expect(rig.machine.state == .busy(.receivingBody) && rig.machine.isWriting)
        #expect(rig.read("big!") == ["complete 413 'big!' close"])
        #expect(!rig.machine.isWriting && rig.machine.state == .closed)
    }

    @Test("a write failure still reads the server's answer; the response completes and the connection closes")
    func writeFailureThenAnswer() {
        var rig = Self.reused()
        _ = rig.machine.requestStarted(Self.get("POST", idempotent: false), at: 0)
        rig.machine.bytesWritten(100, at: 0)
        #expect(describe(rig.machine.writeFailed(SocketError(operation: "send", errno: 32))) == "read after write failure")
        #expect(rig.machine.state == .busy(.awaitingHead) && !rig.machine.isWriting)
        #expect(rig.read("HTTP/1.1 413 Content Too Large\r\nContent-Length: 0\r\n\r\n") == ["head 413", "complete 413 '' close"])
        #expect(describe(rig.machine.writeFailureDrained(nil)) == "none")
    }

    @Test("a write failure without an answer follows the stale-connection rules")
    func writeFailureWithoutAnswer() {
        var reused = Self.reused()
        _ = reused.machine.requestStarted(Self.get(), at: 0)
        _ = reused.machine.writeFailed(nil)
        #expect(describe(reused.machine.writeFailureDrained(nil)) == "retry")
        var fresh = Rig.ready()
        _ = fresh.machine.requestStarted(Self.get(), at: 0)
        _ = fresh.machine.writeFailed(nil)
        #expect(describe(fresh.machine.writeFailureDrained(nil)) == "fail connectionLost")
    }

    @Test("a write failure after response bytes only stops writing; a write failure on an idle connection closes it")
    func writeFailureLate() {
        var rig = Rig.ready()
        _ = rig.machine.requestStarted(Self.get(), at: 0)
        _ = rig.read("HTTP/1.1 200 OK\r\nContent-Length: 3\r\n\r\na")
        #expect(describe(rig.machine.writeFailed(nil)) == "watch readable")
        #expect(rig.read("bc") == ["complete 200 'abc' close"])
        var idle = Rig.ready()
        #expect(describe(idle.machine.writeFailed(nil)) == "close")
    }

    @Test("a request offered to a connection that is not idle fails, and the connection closes")
    func notIdle() {
        var rig = Rig.ready()
        rig.send()
        #expect(describe(rig.machine.requestStarted(Self.get(), at: 1)) == "fail transportFailed")
        #expect(rig.machine.state == .closed)
        var connecting = Rig()
        #expect(describe(connecting.machine.requestStarted(Self.get(), at: 1)) == "fail transportFailed")
    }
}
