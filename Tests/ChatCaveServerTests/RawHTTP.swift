import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// A small blocking HTTP/1.1 client on a raw socket, so the server is tested byte for byte
/// without any HTTP library in between. Every read has a timeout: a test cannot hang.
final class RawHTTP {
    struct Failure: Error, CustomStringConvertible {
        let description: String
    }

    /// A response as read off the wire.
    struct Response: CustomStringConvertible {
        var status: Int
        var headers: [(name: String, value: String)]
        var body: [UInt8]

        func header(_ name: String) -> String? {
            headers.first { $0.name.lowercased() == name.lowercased() }?.value
        }

        var text: String { String(decoding: body, as: UTF8.self) }

        /// The body as a JSON object.
        func object() throws -> [String: Any] {
            guard let object = try JSONSerialization.jsonObject(with: Data(body)) as? [String: Any] else {
                throw Failure(description: "not a JSON object: \(text)")
            }
            return object
        }

        /// The body as a JSON array of objects.
        func array() throws -> [[String: Any]] {
            guard let array = try JSONSerialization.jsonObject(with: Data(body)) as? [[String: Any]] else {
                throw Failure(description: "not a JSON array of objects: \(text)")
            }
            return array
        }

        /// The text of `{"error": …}`.
        var errorText: String? { (try? object())?["error"] as? String }

        var description: String { "\(status) \(text.prefix(300))" }
    }

    private let fd: Int32
    private var buffer: [UInt8] = []

    /// Connects to 127.0.0.1:`port`, from the loopback address `source` (another address of
    /// 127.0.0.0/8 makes the client look like another host) or from any address (`nil`).
    init(port: Int, timeout: Int = 10, from source: String? = nil) throws {
        fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        guard fd >= 0 else { throw Failure(description: "socket failed: \(errno)") }
        if let source {
            var local = sockaddr_in()
            local.sin_family = sa_family_t(AF_INET)
            guard inet_pton(AF_INET, source, &local.sin_addr) == 1 else { throw Failure(description: "not an IPv4 address: \(source)") }
            let bound = withUnsafePointer(to: &local) { pointer in
                pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
            }
            guard bound == 0 else { throw Failure(description: "bind to \(source) failed: \(String(cString: strerror(errno)))") }
        }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = in_port_t(UInt16(port).bigEndian)
        address.sin_addr.s_addr = in_addr_t(UInt32(0x7F00_0001).bigEndian)
        let connected = withUnsafePointer(to: &address) { pointer in
            pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size))
            }
        }
        guard connected == 0 else {
            let code = errno
            // No close here: `deinit` runs (every stored property is set) and closes `fd` once.
            throw Failure(description: "connect failed: \(String(cString: strerror(code)))")
        }
        var limit = timeval(tv_sec: timeout, tv_usec: 0)
        setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &limit, socklen_t(MemoryLayout<timeval>.size))
        setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &limit, socklen_t(MemoryLayout<timeval>.size))
    }

    deinit {
        if fd >= 0 { close(fd) }
    }

    /// Sends bytes exactly as given.
    func write(_ bytes: [UInt8]) throws {
        var offset = 0
        while offset < bytes.count {
            let sent = bytes.withUnsafeBytes { raw -> Int in
                guard let base = raw.baseAddress else { return 0 }
                return send(fd, base + offset, bytes.count - offset, Int32(MSG_NOSIGNAL))
            }
            if sent < 0, errno == EINTR { continue }
            guard sent > 0 else { throw Failure(description: "send failed: \(String(cString: strerror(errno)))") }
            offset += sent
        }
    }

    /// Sends a request with `Host`, `Accept: application/json` (unless given) and, for a body, `Content-Length`.
    func request(_ method: String, _ target: String, headers: [(String, String)] = [], body: [UInt8] = []) throws -> Response {
        var head = "\(method) \(target) HTTP/1.1\r\nHost: 127.0.0.1\r\n"
        if !headers.contains(where: { $0.0.lowercased() == "accept" }) { head += "Accept: application/json\r\n" }
        for (name, value) in headers { head += "\(name): \(value)\r\n" }
        if !body.isEmpty || ["POST", "PUT"].contains(method) { head += "Content-Length: \(body.count)\r\n" }
        head += "\r\n"
        try write(Array(head.utf8) + body)
        return try readResponse(method: method)
    }

    /// Reads one response (bodies framed by `Content-Length`; none for HEAD, 204 and 304).
    func readResponse(method: String = "GET") throws -> Response {
        let separator: [UInt8] = [13, 10, 13, 10]
        var headEnd: Int?
        while headEnd == nil {
            if let found = Self.find(separator, in: buffer) {
                headEnd = found
            } else {
                try fill()
            }
        }
        guard let end = headEnd else { throw Failure(description: "no head") }
        let head = String(decoding: buffer[..<end], as: UTF8.self)
        buffer.removeFirst(end + 4)
        var lines = head.components(separatedBy: "\r\n")
        let statusLine = lines.removeFirst().split(separator: " ")
        guard statusLine.count >= 2, let status = Int(statusLine[1]) else { throw Failure(description: "bad status line: \(head)") }
        var headers: [(name: String, value: String)] = []
        for line in lines {
            guard let colon = line.firstIndex(of: ":") else { continue }
            headers.append((String(line[..<colon]), line[line.index(after: colon)...].trimmingCharacters(in: .whitespaces)))
        }
        var response = Response(status: status, headers: headers, body: [])
        let length = method == "HEAD" || status == 204 || status == 304 ? 0 : Int(response.header("Content-Length") ?? "0") ?? 0
        while buffer.count < length { try fill() }
        response.body = Array(buffer[..<length])
        buffer.removeFirst(length)
        return response
    }

    /// Whether the server closed the connection (reads until end of stream or timeout).
    func readUntilClosed() -> Bool {
        while true {
            do { try fill() } catch let failure as Failure { return failure.description == "closed" || failure.description.contains("reset") } catch { return false }
        }
    }

    private func fill() throws {
        var chunk = [UInt8](repeating: 0, count: 16_384)
        let count = chunk.withUnsafeMutableBytes { recv(fd, $0.baseAddress, $0.count, 0) }
        if count < 0, errno == EINTR { return }
        guard count != 0 else { throw Failure(description: "closed") }
        guard count > 0 else { throw Failure(description: "recv failed: \(String(cString: strerror(errno)))") }
        buffer.append(contentsOf: chunk[..<count])
    }

    private static func find(_ needle: [UInt8], in haystack: [UInt8]) -> Int? {
        guard haystack.count >= needle.count else { return nil }
        for start in 0...(haystack.count - needle.count) where haystack[start..<(start + needle.count)].elementsEqual(needle) {
            return start
        }
        return nil
    }
}
