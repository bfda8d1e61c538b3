// libFuzzer target: HTTPServerCore's connection input path, over a real loopback socket
// (see Fuzz/README.md).
#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif
import CourierHTTP1
import HTTPServerCore

/// The server under test: small limits so that short inputs reach 413 and 431; timeouts long
/// enough never to fire during one input (each input ends with the client's FIN).
let serverLimits = HTTP1Limits(maxHeadBytes: 1024, maxFieldCount: 16)
let maxBodyBytes = 512

/// Started once, on first use. Answers every request with 200, the body's length and hash.
let server: HTTPServer = {
    let configuration = HTTPServer.Configuration(
        maxBodyBytes: maxBodyBytes, headerTimeout: .seconds(30), idleTimeout: .seconds(30),
        lingerTimeout: .seconds(30), limits: serverLimits)
    do {
        return try HTTPServer(configuration: configuration) { request, responder in
            let hash = request.body.withUnsafeBytes { inputHash($0) }
            responder.respond(status: 200, headers: [
                ("X-Body-Length", String(request.body.count)), ("X-Body-Hash", String(hash, radix: 16)),
            ])
        }
    } catch {
        fatalError("cannot start the server: \(error)")
    }
}()

/// One response the server must send.
struct ExpectedResponse: Equatable, CustomStringConvertible {
    var status: Int
    /// The method of the request it answers, when its head could be parsed.
    var method: String?
    /// For 200: the body length and hash the handler saw.
    var bodyLength = 0
    var bodyHash: UInt64 = 0

    var description: String { status == 200 ? "200(\(bodyLength) bytes)" : "\(status)" }
}

/// Thrown by the model's body sink past `maxBodyBytes`.
struct ModelBodyTooLarge: Error {}

/// What the server must answer to `input` followed by the client's FIN, computed with
/// CourierHTTP1 alone: requests are read one after another; the first malformed head gets
/// 400 (431 over the limits), a bad framing 400 (501 for a transfer coding), a body over the
/// limit 413, and each of these ends the exchange; an incomplete request gets no answer; a
/// request that does not keep the connection alive is the last one.
func expectedResponses(for input: UnsafeRawBufferPointer) -> [ExpectedResponse] {
    var expected: [ExpectedResponse] = []
    var offset = 0
    while offset < input.count {
        var parser = RequestHeadParser(limits: serverLimits)
        let head: HTTPRequestHead
        do {
            guard let parsed = try parser.parse(UnsafeRawBufferPointer(rebasing: input[offset...])) else { return expected }
            head = parsed.head
            offset += parsed.consumed
        } catch {
            expected.append(ExpectedResponse(status: error == .headTooLarge || error == .tooManyFields ? 431 : 400))
            return expected
        }
        // The server refuses both framings at once (RFC 9112 §6.1: request smuggling).
        if !head.values(for: "transfer-encoding").isEmpty, !head.values(for: "content-length").isEmpty {
            expected.append(ExpectedResponse(status: 400, method: head.method))
            return expected
        }
        let framing: BodyFraming
        do {
            framing = try BodyFraming.forRequest(head)
        } catch {
            expected.append(ExpectedResponse(status: error == .unsupportedTransferEncoding ? 501 : 400, method: head.method))
            return expected
        }
        var body: [UInt8] = []
        switch framing {
        case .none, .untilClose, .contentLength(0):
            break
        case .contentLength(let length) where length > maxBodyBytes:
            expected.append(ExpectedResponse(status: 413, method: head.method))
            return expected
        case .contentLength, .chunked:
            if head.version == .http1_1, head.value(for: "expect")?.lowercased() == "100-continue" {
                expected.append(ExpectedResponse(status: 100, method: head.method))
            }
            var decoder = BodyDecoder(framing: framing, limits: serverLimits)
            do {
                let result = try decoder.decode(UnsafeRawBufferPointer(rebasing: input[offset...])) { run in
                    if body.count + run.count > maxBodyBytes { throw ModelBodyTooLarge() }
                    body.append(contentsOf: run)
                }
                guard result.isComplete else { return expected }
                offset += result.consumed
            } catch is ModelBodyTooLarge {
                expected.append(ExpectedResponse(status: 413, method: head.method))
                return expected
            } catch {
                expected.append(ExpectedResponse(status: 400, method: head.method))
                return expected
            }
        }
        let hash = body.withUnsafeBytes { inputHash($0) }
        expected.append(ExpectedResponse(status: 200, method: head.method, bodyLength: body.count, bodyHash: hash))
        if !head.keepAlive { return expected }
    }
    return expected
}

/// Sends `input` on a new connection, shuts down the sending side, and reads until the
/// server closes.
/// - Returns: Everything received, or `nil` when the connection was reset (the answer may
///   then be incomplete).
func exchange(_ input: UnsafeRawBufferPointer) -> [UInt8]? {
    let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
    invariant(fd >= 0, "socket: \(errno)")
    defer { close(fd) }
    var address = sockaddr_in()
    address.sin_family = sa_family_t(AF_INET)
    address.sin_port = in_port_t(UInt16(server.port).bigEndian)
    address.sin_addr.s_addr = in_addr_t(UInt32(0x7F00_0001).bigEndian)
    var connected = withUnsafePointer(to: &address) {
        $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
    }
    if connected != 0 && errno == EINTR {
        // A signal (libFuzzer's timer) cut the call short; the connect goes on: wait for it.
        var waiting = pollfd(fd: fd, events: Int16(POLLOUT), revents: 0)
        var error: Int32 = 0
        var size = socklen_t(MemoryLayout<Int32>.size)
        if poll(&waiting, 1, 10_000) == 1, getsockopt(fd, SOL_SOCKET, SO_ERROR, &error, &size) == 0 {
            connected = error == 0 ? 0 : -1
            errno = error
        }
    }
    invariant(connected == 0, "connect: \(String(cString: strerror(errno)))")
    var limit = timeval(tv_sec: 10, tv_usec: 0)
    setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &limit, socklen_t(MemoryLayout<timeval>.size))
    setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &limit, socklen_t(MemoryLayout<timeval>.size))
    var sent = 0
    while sent < input.count, let base = input.baseAddress {
        let count = send(fd, base + sent, input.count - sent, Int32(MSG_NOSIGNAL))
        if count < 0 && errno == EINTR { continue }
        if count <= 0 { break }  // the server may close early (after an error answer)
        sent += count
    }
    shutdown(fd, Int32(SHUT_WR))
    var received: [UInt8] = []
    var chunk = [UInt8](repeating: 0, count: 16_384)
    for _ in 0..<10_000 {
        let count = chunk.withUnsafeMutableBytes { recv(fd, $0.baseAddress, $0.count, 0) }
        if count > 0 {
            received += chunk[..<count]
            continue
        }
        if count == 0 { return received }
        let code = errno
        if code == EINTR { continue }
        if code == ECONNRESET { return nil }
        invariant(false, "the server neither answered nor closed within 10 s (errno \(code)); got \(printable(received))")
    }
    invariant(false, "endless response stream")
    return nil
}

/// One response as parsed off the wire.
struct ReceivedResponse {
    var head: HTTPResponseHead
    var body: [UInt8]
}

/// Splits the server's bytes into responses; every byte must belong to a well-formed response.
/// - Parameters:
///   - bytes: What the server sent.
///   - methods: The method each response answers, in order (a response to `HEAD` has no body).
///   - context: For failure messages.
func parseResponses(_ bytes: [UInt8], methods: [String?], context: String) -> [ReceivedResponse] {
    var responses: [ReceivedResponse] = []
    var offset = 0
    while offset < bytes.count {
        var parser = ResponseHeadParser()
        var parsed: (head: HTTPResponseHead, consumed: Int)?
        do {
            parsed = try bytes[offset...].withUnsafeBytes { try parser.parse($0) }
        } catch {
            invariant(false, "malformed response (\(error)) at \(offset): \(printable(bytes)); \(context)")
        }
        guard let parsed else {
            invariant(false, "a truncated response at \(offset): \(printable(bytes)); \(context)")
            return responses
        }
        offset += parsed.consumed
        var length = 0
        if !(100...199).contains(parsed.head.status) {
            let framing: BodyFraming
            do {
                let method = responses.count < methods.count ? methods[responses.count] : nil
                framing = try BodyFraming.forResponse(parsed.head, requestMethod: method ?? "GET")
            } catch {
                invariant(false, "response framing: \(error); \(context)")
                return responses
            }
            switch framing {
            case .contentLength(let declared):
                length = declared
            case .none:
                length = 0
            case .chunked, .untilClose:
                invariant(false, "a response without Content-Length: \(parsed.head); \(context)")
            }
        }
        invariant(offset + length <= bytes.count, "a truncated response body: \(printable(bytes)); \(context)")
        responses.append(ReceivedResponse(head: parsed.head, body: Array(bytes[offset..<(offset + length)])))
        offset += length
    }
    return responses
}

/// Counts inputs, to check for leaked connections now and then.
nonisolated(unsafe) var inputCount = 0

/// Checks one input against the server: it answers exactly what `expectedResponses` says (the
/// same statuses, the same bodies handed to the handler), every answer is well-formed, an
/// error answer is the last one and says `Connection: close`, no answer carries a body for a
/// `HEAD` request, the server closes the connection, and (checked every 256 inputs) no
/// connection stays open.
@_cdecl("LLVMFuzzerTestOneInput")
public func serverInputFuzzer(_ data: UnsafePointer<UInt8>?, _ size: Int) -> CInt {
    let input = UnsafeRawBufferPointer(start: data, count: data == nil ? 0 : size)
    let expected = expectedResponses(for: input)
    let context = "input \(printable(input)), expected \(expected)"
    guard let bytes = exchange(input) else { return 0 }
    let responses = parseResponses(bytes, methods: expected.map(\.method), context: context)
    let statuses = responses.map(\.head.status)
    invariant(statuses == expected.map(\.status), "answered \(statuses); \(context)")
    for (index, (response, want)) in zip(responses, expected).enumerated() {
        if want.status == 200 {
            let length = response.head.value(for: "x-body-length")
            let hash = response.head.value(for: "x-body-hash")
            invariant(length == String(want.bodyLength) && hash == String(want.bodyHash, radix: 16),
                      "the handler saw a body of \(length ?? "?") bytes (hash \(hash ?? "?")); \(context)")
        } else if want.status >= 400 {
            invariant(index == responses.count - 1, "an answer after an error; \(context)")
            invariant(response.head.value(for: "connection")?.lowercased() == "close", "an error without Connection: close")
        }
    }
    for response in responses where response.head.status == 200 {
        invariant(response.body.isEmpty, "a 200 with a body; \(context)")
    }
    inputCount += 1
    if inputCount % 256 == 0 {
        var open = server.connectionsOpen
        for _ in 0..<200 where open != 0 {
            usleep(10_000)
            open = server.connectionsOpen
        }
        invariant(open == 0, "\(open) connections still open after every client left")
    }
    return 0
}
