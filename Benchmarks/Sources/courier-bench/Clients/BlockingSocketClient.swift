import Foundation
import Glibc
import Synchronization

/// The simplest fast HTTP/1.1 client there is: one blocking TCP socket with keep-alive, the
/// request written with one `write`, the response read with `read` until its `Content-Length`
/// is complete. It is the CPU floor a Swift client is compared with ("CPU per request ≤ 3× a
/// blocking-socket client").
///
/// It sends one request at a time (concurrency 1 only), understands only `Content-Length`
/// bodies (what nginx sends for the benchmark's files) and blocks the thread it runs on. In the
/// large-body scenarios it is the plain copy loop: `read` from the socket and `write` to the
/// file, or `read` from the file and `write` to the socket, 256 KiB at a time.
final class BlockingSocketClient: BenchClient {
    private struct Connection {
        var descriptor: Int32 = -1
        var scratch = [UInt8](repeating: 0, count: 256 << 10)
    }

    private let host: String
    private let port: UInt16
    private let connection = Mutex(Connection())

    /// Checks the job's URL; the socket opens on the first request.
    /// - Throws: ``BenchError`` when the URL is not `http://<IPv4>:<port>/…`.
    init(job: WorkerJob) throws {
        guard let url = URL(string: job.url), url.scheme == "http", let host = url.host, let port = url.port,
              let port16 = UInt16(exactly: port) else {
            throw BenchError("the blocking socket client needs http://<IPv4 address>:<port>, got \(job.url)")
        }
        self.host = host
        self.port = port16
    }

    func send(_ request: BenchRequest) async throws -> BenchResponse {
        var head = "\(request.method) \(request.url.path) HTTP/1.1\r\nHost: \(host):\(port)\r\n"
        if !request.body.isEmpty {
            head += "Content-Type: application/json\r\nContent-Length: \(request.body.count)\r\n"
        }
        if case .uploadFromFile(_, let bytes) = request.transfer {
            head += "Content-Type: application/octet-stream\r\nContent-Length: \(bytes)\r\n"
        }
        var bytes = Array((head + "\r\n").utf8)
        bytes.append(contentsOf: request.body)
        return try connection.withLock { connection in
            if connection.descriptor < 0 { connection.descriptor = try openSocket() }
            do {
                return try exchange(bytes, transfer: request.transfer, on: &connection)
            } catch {
                close(connection.descriptor)
                connection.descriptor = -1
                throw error
            }
        }
    }

    func shutdown() async {
        connection.withLock { connection in
            if connection.descriptor >= 0 { close(connection.descriptor) }
            connection.descriptor = -1
        }
    }

    /// Connects a new socket with `TCP_NODELAY`.
    private func openSocket() throws -> Int32 {
        let descriptor = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard descriptor >= 0 else { throw BenchError("socket() failed: errno \(errno)") }
        var noDelay: Int32 = 1
        setsockopt(descriptor, Int32(IPPROTO_TCP), TCP_NODELAY, &noDelay, socklen_t(MemoryLayout<Int32>.size))
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = port.bigEndian
        inet_pton(AF_INET, host, &address.sin_addr)
        let result = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                connect(descriptor, $0, socklen_t(MemoryLayout<sockaddr_in>.size))
            }
        }
        guard result == 0 else {
            close(descriptor)
            throw BenchError("connect to \(host):\(port) failed: errno \(errno)")
        }
        return descriptor
    }

    /// Writes the request (and the file of an upload) and reads one whole response (into the
    /// file of a download).
    private func exchange(_ request: [UInt8], transfer: BenchTransfer, on connection: inout Connection) throws -> BenchResponse {
        let descriptor = connection.descriptor
        let written = request.withUnsafeBytes { write(descriptor, $0.baseAddress, $0.count) }
        guard written == request.count else { throw BenchError("short write") }
        var sent = 0
        if case .uploadFromFile(let file, _) = transfer {
            let input = try Self.open(file, writing: false)
            defer { close(input) }
            sent = try Self.copy(from: input, to: descriptor, scratch: &connection.scratch)
        }
        var output: Int32 = -1
        if case .downloadToFile(let file) = transfer { output = try Self.open(file, writing: true) }
        defer { if output >= 0 { close(output) } }
        // Read until the head is complete.
        var received: [UInt8] = []
        var headEnd = 0
        while headEnd == 0 {
            let count = connection.scratch.withUnsafeMutableBytes { read(descriptor, $0.baseAddress, $0.count) }
            guard count > 0 else { throw BenchError("the server closed the connection") }
            received.append(contentsOf: connection.scratch[0..<count])
            headEnd = Self.endOfHead(in: received)
            guard received.count < 64 << 10 || headEnd > 0 else { throw BenchError("response head too large") }
        }
        let (status, length) = try Self.parseHead(received[0..<headEnd])
        if output >= 0 { try Self.writeAll(received[headEnd...], to: output) }
        // Read the rest of the body, never past it.
        var remaining = length - (received.count - headEnd)
        while remaining > 0 {
            let count = connection.scratch.withUnsafeMutableBytes { read(descriptor, $0.baseAddress, min($0.count, remaining)) }
            guard count > 0 else { throw BenchError("the server closed the connection mid-body") }
            if output >= 0 { try Self.writeAll(connection.scratch[0..<count], to: output) }
            remaining -= count
        }
        if case .uploadFromFile = transfer { return BenchResponse(status: status, bodyBytes: sent) }
        return BenchResponse(status: status, bodyBytes: length)
    }

    /// Opens `file` to read, or to write (created or emptied).
    private static func open(_ file: URL, writing: Bool) throws -> Int32 {
        let descriptor = writing ? Glibc.open(file.path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o644)
                                 : Glibc.open(file.path, O_RDONLY | O_CLOEXEC)
        guard descriptor >= 0 else { throw BenchError("cannot open \(file.path): errno \(errno)") }
        return descriptor
    }

    /// Copies everything `source` holds to `destination` with `read` and `write`; the bytes copied.
    private static func copy(from source: Int32, to destination: Int32, scratch: inout [UInt8]) throws -> Int {
        var total = 0
        while true {
            let count = scratch.withUnsafeMutableBytes { read(source, $0.baseAddress, $0.count) }
            guard count >= 0 else { throw BenchError("read failed: errno \(errno)") }
            if count == 0 { return total }
            try writeAll(scratch[0..<count], to: destination)
            total += count
        }
    }

    /// Writes all of `bytes`, however many `write` calls it takes.
    private static func writeAll(_ bytes: ArraySlice<UInt8>, to descriptor: Int32) throws {
        try bytes.withUnsafeBytes { raw in
            var offset = 0
            while offset < raw.count {
                let count = write(descriptor, raw.baseAddress! + offset, raw.count - offset)
                guard count > 0 else { throw BenchError("write failed: errno \(errno)") }
                offset += count
            }
        }
    }

    /// The index just past `\r\n\r\n`, or 0 when the head is not complete.
    private static func endOfHead(in bytes: [UInt8]) -> Int {
        guard bytes.count >= 4 else { return 0 }
        for index in 3..<bytes.count where bytes[index] == 10 && bytes[index - 1] == 13
            && bytes[index - 2] == 10 && bytes[index - 3] == 13 {
            return index + 1
        }
        return 0
    }

    /// The status code and `Content-Length` of a response head.
    private static func parseHead(_ head: ArraySlice<UInt8>) throws -> (status: Int, length: Int) {
        let lines = String(decoding: head, as: UTF8.self).split(separator: "\r\n")
        guard let statusLine = lines.first, statusLine.count >= 12,
              let status = Int(statusLine.dropFirst(9).prefix(3)) else {
            throw BenchError("bad status line")
        }
        if status == 204 || status == 304 { return (status, 0) }
        for line in lines.dropFirst() where line.lowercased().hasPrefix("content-length:") {
            guard let length = Int(line.dropFirst(15).trimmingCharacters(in: .whitespaces)), length >= 0 else {
                throw BenchError("bad Content-Length")
            }
            return (status, length)
        }
        throw BenchError("the blocking socket client needs a Content-Length")
    }
}
