import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// A minimal blocking HTTP/1.1 client over a raw socket, for driving the test server
/// exactly (including through its faults). Every read has a timeout, so a test can
/// never hang.
final class TestClient {
    struct Failure: Error, CustomStringConvertible {
        let description: String
    }

    struct Response {
        var status: Int
        var reason: String
        var headers: [(String, String)]
        var body: [UInt8]
        func header(_ name: String) -> String? {
            headers.first { $0.0.lowercased() == name.lowercased() }?.1
        }
        var text: String { String(decoding: body, as: UTF8.self) }
        func json() throws -> [String: Any] {
            guard let object = try JSONSerialization.jsonObject(with: Data(body)) as? [String: Any] else {
                throw Failure(description: "not a JSON object: \(text)")
            }
            return object
        }
    }

    let fd: Int32
    private var buffer: [UInt8] = []
    private(set) var sawEOF = false

    /// Connects to 127.0.0.1:`port` with a blocking socket.
    init(port: Int, timeout: Double = 10) throws {
        fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        guard fd >= 0 else { throw Failure(description: "socket: \(errno)") }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = UInt16(port).bigEndian
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        let status = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                Glibc.connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size))
            }
        }
        guard status == 0 else {
            let code = errno
            // No close here: every stored property is set, so `deinit` runs and closes `fd`.
            // Closing it twice could close a descriptor another thread has just been given.
            throw Failure(description: "connect: \(String(cString: strerror(code)))")
        }
        setTimeout(timeout)
    }

    deinit { if fd >= 0 { Glibc.close(fd) } }

    func setTimeout(_ seconds: Double) {
        var value = timeval(tv_sec: Int(seconds), tv_usec: Int((seconds - Double(Int(seconds))) * 1_000_000))
        setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &value, socklen_t(MemoryLayout<timeval>.size))
        setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &value, socklen_t(MemoryLayout<timeval>.size))
    }

    func send(_ text: String) throws { try send(Array(text.utf8)) }

    func send(_ bytes: [UInt8]) throws {
        var offset = 0
        while offset < bytes.count {
            let written = bytes.withUnsafeBytes { raw in
                Glibc.send(fd, raw.baseAddress! + offset, bytes.count - offset, Int32(MSG_NOSIGNAL))
            }
            if written < 0 {
                if errno == EINTR { continue }
                throw Failure(description: "send: \(String(cString: strerror(errno)))")
            }
            offset += written
        }
    }

    /// Sends a request with `Host` and, when there is a body, `Content-Length`.
    func request(_ method: String = "GET", _ target: String, headers: [(String, String)] = [], body: [UInt8] = []) throws {
        var head = "\(method) \(target) HTTP/1.1\r\nHost: 127.0.0.1\r\n"
        for (name, value) in headers { head += "\(name): \(value)\r\n" }
        if !body.isEmpty || method == "POST" || method == "PUT" { head += "Content-Length: \(body.count)\r\n" }
        head += "\r\n"
        try send(Array(head.utf8) + body)
    }

    /// Reads more bytes; returns false at EOF. Throws on timeout or error.
    @discardableResult
    private func fill() throws -> Bool {
        var chunk = [UInt8](repeating: 0, count: 65536)
        while true {
            let count = chunk.withUnsafeMutableBytes { Glibc.recv(fd, $0.baseAddress, $0.count, 0) }
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
            throw Failure(description: "recv: \(String(cString: strerror(code))) (errno \(code))")
        }
    }

    /// Reads until the peer closes (or the timeout); returns everything received.
    func readUntilClose() throws -> [UInt8] {
        while try fill() {}
        defer { buffer = [] }
        return buffer
    }

    /// Whether the server closed the connection (EOF or reset) within the timeout.
    func waitForClose() -> Bool {
        do {
            while try fill() {}
            return true
        } catch let failure as Failure {
            return failure.description.contains("ECONNRESET") || failure.description.contains("reset")
        } catch {
            return false
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

    /// Reads one response (skipping nothing: a 1xx is returned as is).
    func readResponse(method: String = "GET") throws -> Response {
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
                guard let size = Int(sizeLine.split(separator: ";")[0], radix: 16) else {
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

    /// Sends a request and reads its response.
    func exchange(_ method: String = "GET", _ target: String, headers: [(String, String)] = [], body: [UInt8] = []) throws -> Response {
        try request(method, target, headers: headers, body: body)
        return try readResponse(method: method)
    }

    /// Reads until the unconsumed bytes satisfy `predicate` (or EOF / timeout).
    func readUntil(_ predicate: ([UInt8]) -> Bool) throws {
        while !predicate(buffer) {
            guard try fill() else { return }
        }
    }

    /// Bytes already received but not consumed.
    var pending: [UInt8] { buffer }
}
