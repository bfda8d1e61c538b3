import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// A small blocking HTTP/1.1 client on a raw socket, so that a server (CourierTestServer, the
/// ChatCave server) is tested byte for byte, faults and malformed input included, with no HTTP
/// library in between. Every read and write has a timeout: a test cannot hang on it.
package final class RawHTTPClient {
    /// What went wrong on the socket, or in what the server sent.
    package struct Failure: Error, CustomStringConvertible {
        package let description: String

        package init(description: String) {
            self.description = description
        }
    }

    /// A response as read off the wire.
    package struct Response: CustomStringConvertible {
        package var status: Int
        package var reason: String
        package var headers: [(name: String, value: String)]
        package var body: [UInt8]

        /// The first value of a field, by case-insensitive name.
        package func header(_ name: String) -> String? {
            headers.first { $0.name.lowercased() == name.lowercased() }?.value
        }

        /// The body as UTF-8 text.
        package var text: String { String(decoding: body, as: UTF8.self) }

        /// The body as a JSON object.
        package func object() throws -> [String: Any] {
            guard let object = try JSONSerialization.jsonObject(with: Data(body)) as? [String: Any] else {
                throw Failure(description: "not a JSON object: \(text)")
            }
            return object
        }

        /// The body as a JSON array of objects.
        package func array() throws -> [[String: Any]] {
            guard let array = try JSONSerialization.jsonObject(with: Data(body)) as? [[String: Any]] else {
                throw Failure(description: "not a JSON array of objects: \(text)")
            }
            return array
        }

        /// The status and the start of the body.
        package var description: String { "\(status) \(text.prefix(300))" }
    }

    /// The socket, for tests that probe it directly.
    package let fd: Int32
    private var buffer: [UInt8] = []
    /// Whether a read met the end of the stream.
    package private(set) var sawEOF = false

    /// Connects a blocking socket to 127.0.0.1:`port`.
    /// - Parameters:
    ///   - timeout: the longest wait of one read or write, in seconds.
    ///   - source: the loopback address to connect from (another address of 127.0.0.0/8 makes
    ///     the client look like another host); `nil` for any.
    package init(port: Int, timeout: Double = 10, from source: String? = nil) throws {
        fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        // On every failure below `deinit` closes `fd` once (every stored property is set);
        // closing it here too could close a descriptor another thread has just been given.
        guard fd >= 0 else { throw Failure(description: "socket: \(String(cString: strerror(errno)))") }
        if let source {
            var local = sockaddr_in()
            local.sin_family = sa_family_t(AF_INET)
            guard inet_pton(AF_INET, source, &local.sin_addr) == 1 else { throw Failure(description: "not an IPv4 address: \(source)") }
            let bound = withUnsafePointer(to: &local) { pointer in
                pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
            }
            guard bound == 0 else { throw Failure(description: "bind to \(source): \(String(cString: strerror(errno)))") }
        }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = in_port_t(UInt16(port).bigEndian)
        address.sin_addr.s_addr = in_addr_t(UInt32(0x7F00_0001).bigEndian)
        let connected = withUnsafePointer(to: &address) { pointer in
            pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
        }
        guard connected == 0 else { throw Failure(description: "connect: \(String(cString: strerror(errno)))") }
        setTimeout(timeout)
    }

    deinit {
        if fd >= 0 { close(fd) }
    }

    /// Sets the longest wait of one read or write, in seconds.
    package func setTimeout(_ seconds: Double) {
        var value = timeval(tv_sec: Int(seconds), tv_usec: Int((seconds - Double(Int(seconds))) * 1_000_000))
        setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &value, socklen_t(MemoryLayout<timeval>.size))
        setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &value, socklen_t(MemoryLayout<timeval>.size))
    }

    /// Sends the UTF-8 bytes of `text` exactly as given.
    package func send(_ text: String) throws { try send(Array(text.utf8)) }

    /// Sends bytes exactly as given.
    package func send(_ bytes: [UInt8]) throws {
        var offset = 0
        while offset < bytes.count {
            let sent = bytes.withUnsafeBytes { raw -> Int in
                guard let base = raw.baseAddress else { return 0 }
                return Glibc.send(fd, base + offset, bytes.count - offset, Int32(MSG_NOSIGNAL))
            }
            if sent < 0, errno == EINTR { continue }
            guard sent > 0 else { throw Failure(description: "send: \(String(cString: strerror(errno)))") }
            offset += sent
        }
    }

    /// Shuts down the sending side (a FIN): the client has nothing more to say.
    package func shutdownWrite() {
        shutdown(fd, Int32(SHUT_WR))
    }

    /// Sends a request with `Host` and, when there is a body (or for a POST or PUT),
    /// `Content-Length`; does not wait for the response.
    package func sendRequest(_ method: String = "GET", _ target: String, headers: [(String, String)] = [],
                             body: [UInt8] = []) throws {
        var head = "\(method) \(target) HTTP/1.1\r\nHost: 127.0.0.1\r\n"
        for (name, value) in headers { head += "\(name): \(value)\r\n" }
        if !body.isEmpty || method == "POST" || method == "PUT" { head += "Content-Length: \(body.count)\r\n" }
        head += "\r\n"
        try send(Array(head.utf8) + body)
    }

    /// Sends a request (as ``sendRequest(_:_:headers:body:)``) and reads its response.
    package func exchange(_ method: String = "GET", _ target: String, headers: [(String, String)] = [],
                          body: [UInt8] = []) throws -> Response {
        try sendRequest(method, target, headers: headers, body: body)
        return try readResponse(method: method)
    }

    /// Reads one response: a body framed by `Content-Length`, chunks, or the end of the
    /// connection; none for `HEAD`, 1xx, 204 and 304 (a 1xx is returned as it is).
    package func readResponse(method: String = "GET") throws -> Response {
        let statusLine = try readLine()
        let parts = statusLine.split(separator: " ", maxSplits: 2, omittingEmptySubsequences: false)
        guard parts.count >= 2, parts[0].hasPrefix("HTTP/1."), let status = Int(parts[1]) else {
            throw Failure(description: "bad status line: \(statusLine)")
        }
        var response = Response(status: status, reason: parts.count > 2 ? String(parts[2]) : "", headers: [], body: [])
        while true {
            let line = try readLine()
            if line.isEmpty { break }
            guard let colon = line.firstIndex(of: ":") else { throw Failure(description: "bad header: \(line)") }
            let value = line[line.index(after: colon)...].trimmingCharacters(in: .whitespaces)
            response.headers.append((String(line[..<colon]), value))
        }
        if (100...199).contains(status) || status == 204 || status == 304 || method == "HEAD" { return response }
        if response.header("transfer-encoding")?.lowercased() == "chunked" {
            while true {
                let sizeLine = try readLine()
                guard let size = Int(sizeLine.split(separator: ";", omittingEmptySubsequences: false)[0], radix: 16) else {
                    throw Failure(description: "bad chunk size: \(sizeLine)")
                }
                if size == 0 {
                    while try !readLine().isEmpty {}
                    break
                }
                response.body += try readExactly(size)
                _ = try readExactly(2)
            }
        } else if let length = response.header("content-length").flatMap({ Int($0) }) {
            response.body = try readExactly(length)
        } else {
            response.body = try readUntilClose()
        }
        return response
    }

    /// Reads until the peer closes; returns everything not consumed yet.
    /// - Throws: ``Failure`` on a timeout or a reset.
    package func readUntilClose() throws -> [UInt8] {
        while try fill() {}
        defer { buffer = [] }
        return buffer
    }

    /// Whether the server closed the connection (an end of stream or a reset) within the timeout.
    package func waitForClose() -> Bool {
        let end = readAll()
        return end.closed || end.reset
    }

    /// Reads until the peer closes, resets, or the timeout passes without a byte; never throws.
    /// - Returns: everything not consumed yet, and how the reading ended.
    package func readAll() -> (bytes: [UInt8], closed: Bool, reset: Bool) {
        var reset = false
        do {
            while try fill() {}
        } catch {
            reset = "\(error)".contains("ECONNRESET")
        }
        defer { buffer = [] }
        return (buffer, sawEOF, reset)
    }

    /// Whether the server has sent something or closed, without waiting.
    package func hasAnswer() -> Bool {
        guard buffer.isEmpty, !sawEOF else { return true }
        var byte: UInt8 = 0
        return recv(fd, &byte, 1, Int32(MSG_PEEK | MSG_DONTWAIT)) >= 0
    }

    /// Reads until the unconsumed bytes satisfy `predicate`, or the end of the stream.
    /// - Throws: ``Failure`` on a timeout or a reset.
    package func readUntil(_ predicate: ([UInt8]) -> Bool) throws {
        while !predicate(buffer) {
            guard try fill() else { return }
        }
    }

    /// Bytes already received but not consumed.
    package var pending: [UInt8] { buffer }

    /// Reads more bytes; `false` at the end of the stream.
    /// - Throws: ``Failure`` on a timeout ("read timed out") or another error (naming the errno).
    @discardableResult
    private func fill() throws -> Bool {
        var chunk = [UInt8](repeating: 0, count: 65_536)
        while true {
            let count = chunk.withUnsafeMutableBytes { recv(fd, $0.baseAddress, $0.count, 0) }
            if count > 0 {
                buffer += chunk[0..<count]
                return true
            }
            if count == 0 {
                sawEOF = true
                return false
            }
            let code = errno
            if code == EINTR { continue }
            if code == EAGAIN || code == EWOULDBLOCK { throw Failure(description: "read timed out") }
            let name = code == ECONNRESET ? "ECONNRESET" : "errno \(code)"
            throw Failure(description: "recv: \(String(cString: strerror(code))) (\(name))")
        }
    }

    private func readLine() throws -> String {
        while true {
            if let index = buffer.firstIndex(of: 0x0A) {
                var line = Array(buffer[..<index])
                buffer.removeFirst(index + 1)
                if line.last == 0x0D { line.removeLast() }
                return String(decoding: line, as: UTF8.self)
            }
            guard try fill() else { throw Failure(description: "connection closed in a line") }
        }
    }

    private func readExactly(_ count: Int) throws -> [UInt8] {
        while buffer.count < count {
            guard try fill() else { throw Failure(description: "connection closed after \(buffer.count) of \(count) bytes") }
        }
        let bytes = Array(buffer[..<count])
        buffer.removeFirst(count)
        return bytes
    }
}
