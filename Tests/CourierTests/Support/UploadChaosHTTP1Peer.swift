import CourierTestServer
import CourierTestSupport
import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// A raw HTTP/1.1 server for ``UploadChaos`` uploads, listening on 127.0.0.1 (port 0), a thread
/// for each connection: it reads each request head, then the body (by `Content-Length` or the
/// chunked coding) as far as the upload's fault lets it, the first time it sees the path: it
/// stores, reads slowly, answers early, closes, resets or stalls (see ``UploadChaos/Fault``).
/// Later visits are stored. It answers `Expect: 100-continue` with `100 Continue` before it reads
/// a body, and `GET /echo` with 200.
///
/// It logs every visit (``Visit``): which connection, which request on it, how much of the body
/// arrived, what it answered; and, while it holds a stream's body back, how far the client read
/// the body source ahead of what arrived. Every wait is bounded (10 s).
final class UploadChaosHTTP1Peer: Sendable {
    /// One time the server saw a request.
    struct Visit: Sendable, CustomStringConvertible {
        let connection: Int
        let requestOnConnection: Int
        let fault: UploadChaos.Fault
        /// Body octets read.
        var received = 0
        /// The body was read to its end.
        var complete = false
        /// The body of the answer sent, if any.
        var answered: String?
        /// The most octets the body source had yielded beyond ``received`` while the server held back.
        var ahead = 0

        var description: String { "\(connection).\(requestOnConnection) \(fault): got \(received)\(complete ? " (all)" : "")\(answered.map { ", answered '\($0)'" } ?? "")" }
    }

    private let uploads: [String: UploadChaos.Upload]
    private let visits = Locked<[String: [Visit]]>([:])
    private let listener = Locked<ThreadedListener?>(nil)

    /// Starts listening for `uploads`.
    init(_ uploads: [UploadChaos.Upload]) throws {
        self.uploads = Dictionary(uniqueKeysWithValues: uploads.map { ($0.path, $0) })
        // A small receive buffer, so that a server that stops reading holds the client back soon.
        let listening = try ThreadedListener(receiveBuffer: 64 << 10) { [weak self] descriptor, number in
            self?.serve(descriptor, connection: number)
        }
        listener.withLock { $0 = listening }
    }

    /// The port it listens on.
    var port: Int { listener.withLock { $0?.port ?? 0 } }

    /// `http://127.0.0.1:<port>`.
    var baseURL: URL { URL(string: "http://127.0.0.1:\(port)")! }

    /// How many connections it accepted.
    var connectionsAccepted: Int { listener.withLock { $0?.connectionsAccepted ?? 0 } }

    /// Every visit of `path`, in order.
    func visits(_ path: String) -> [Visit] { visits.withLock { $0[path] ?? [] } }

    /// Stops accepting and shuts every connection down.
    func close() {
        listener.withLock { $0?.close() }
    }

    /// Serves the requests of one connection until it closes or a fault ends it.
    private func serve(_ fd: Int32, connection: Int) {
        var reader = PeerReader(fd: fd)
        var requestNumber = 0
        while let head = reader.head() {
            requestNumber += 1
            var framing = PeerBodyFraming(head)
            guard let upload = uploads[head.path] else {
                var ignored = Data()
                guard framing.read(&reader, upTo: .max, into: &ignored) else { return }
                send(fd, status: 200, body: head.path, closing: false)
                continue
            }
            let visit = visits.withLock { all -> Int in
                let first = all[head.path] == nil
                all[head.path, default: []].append(Visit(connection: connection, requestOnConnection: requestNumber,
                                                         fault: first ? upload.fault : .store))
                return all[head.path]!.count - 1
            }
            let fault = visit == 0 ? upload.fault : .store
            if head.expectsContinue, fault.at != 0 { sendRaw(fd, Data("HTTP/1.1 100 Continue\r\n\r\n".utf8)) }
            var body = Data()
            func update(_ visit: inout Visit) {
                visit.received = body.count
                visit.complete = framing.done
            }
            func log(_ change: (inout Visit) -> Void) { visits.withLock { change(&$0[head.path]![visit]) } }
            switch fault {
            case .store, .slowRead, .refuse, .goAway:
                var pauseAt: Int? = nil
                if case .slowRead(let at) = fault { pauseAt = at }
                while !framing.done {
                    let slow = pauseAt != nil
                    guard framing.read(&reader, upTo: slow ? body.count + (16 << 10) : .max, into: &body) else { log(update); return }
                    if let at = pauseAt, body.count >= at {
                        pauseAt = nil
                        let ahead = holdStill(upload, received: body.count, socket: fd)
                        log { $0.ahead = ahead }
                    } else if slow {
                        usleep(500)
                    }
                }
                let answer = UploadChaos.Upload.answer(path: head.path, body: body)
                log { update(&$0); $0.answered = answer }
                send(fd, status: 200, body: answer, closing: false)
            case .early(let status, let at, let closes):
                guard framing.read(&reader, upTo: at, into: &body) else { log(update); return }
                log { update(&$0); $0.answered = upload.earlyAnswer }
                send(fd, status: status, body: upload.earlyAnswer, closing: true)
                if !closes {
                    // The client reads the answer while its body is still going out, then the rest drains.
                    usleep(20_000)
                    var rest = Data()
                    _ = framing.read(&reader, upTo: .max, into: &rest)
                }
                return
            case .cut(let at), .drop(let at):
                _ = framing.read(&reader, upTo: at, into: &body)
                log(update)
                if case .drop = fault {
                    var linger = Glibc.linger(l_onoff: 1, l_linger: 0)
                    setsockopt(fd, SOL_SOCKET, SO_LINGER, &linger, socklen_t(MemoryLayout<Glibc.linger>.size))
                }
                return
            case .stall(let at):
                _ = framing.read(&reader, upTo: at, into: &body)
                log(update)
                // Read nothing more until the client gives up and closes (or 10 s).
                let ahead = holdStill(upload, received: body.count, socket: fd, untilClosed: true)
                log { $0.ahead = ahead }
                return
            }
        }
    }

    /// Holds still until the client stops reading the upload's body source (and, `untilClosed`,
    /// until the client closes, at most 10 s), and tells how far the client read the source
    /// beyond what is in the kernel's hands: the `received` octets, those waiting unread in
    /// `socket` and those in the client's send queue.
    private func holdStill(_ upload: UploadChaos.Upload, received: Int, socket fd: Int32, untilClosed: Bool = false) -> Int {
        upload.log.settle()
        let ahead = upload.log.yielded - received - KernelQueues.held(by: fd)
        if untilClosed {
            var poller = pollfd(fd: fd, events: 0x2000, revents: 0)  // POLLRDHUP: the client closed
            _ = poll(&poller, 1, 10_000)
        }
        return ahead
    }

    private func send(_ fd: Int32, status: Int, body: String, closing: Bool) {
        let head = "HTTP/1.1 \(status) Chaos\r\nContent-Length: \(body.utf8.count)\r\n\(closing ? "Connection: close\r\n" : "")\r\n"
        sendRaw(fd, Data((head + body).utf8))
    }

    private func sendRaw(_ fd: Int32, _ data: Data) {
        ThreadedListener.send(fd, data)
    }
}

/// A request head as ``PeerReader`` read it.
struct PeerRequestHead {
    let method: String
    let path: String
    let fields: [(name: String, value: String)]

    /// The value of field `name` (case-insensitive), if any.
    func value(_ name: String) -> String? { fields.first { $0.name.lowercased() == name }?.value }

    var expectsContinue: Bool { value("expect")?.lowercased() == "100-continue" }
}

/// Buffered reading from a socket, each wait bounded by 10 s.
struct PeerReader {
    let fd: Int32
    private var buffer: [UInt8] = []
    private var position = 0

    init(fd: Int32) { self.fd = fd }

    /// Whether bytes read from the socket wait in the buffer.
    var hasBuffered: Bool { position < buffer.count }

    /// Reads more into the buffer; `false` at the end, on an error or after 10 s of silence.
    private mutating func fill() -> Bool {
        if position == buffer.count {
            buffer.removeAll(keepingCapacity: true)
            position = 0
        }
        var poller = pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
        guard poll(&poller, 1, 10_000) > 0 else { return false }
        var chunk = [UInt8](repeating: 0, count: 64 << 10)
        let count = chunk.withUnsafeMutableBytes { read(fd, $0.baseAddress, $0.count) }
        guard count > 0 else { return false }
        buffer.append(contentsOf: chunk[0..<count])
        return true
    }

    /// The next line, without its CRLF.
    mutating func line() -> String? {
        while true {
            if let end = buffer[position...].firstIndex(of: 0x0A) {
                let line = String(decoding: buffer[position..<end], as: UTF8.self)
                position = end + 1
                return line.hasSuffix("\r") ? String(line.dropLast()) : line
            }
            guard buffer.count - position < 64 << 10, fill() else { return nil }
        }
    }

    /// Up to `max` octets (at least one), or `nil` at the end.
    mutating func take(max: Int) -> ArraySlice<UInt8>? {
        if position == buffer.count, !fill() { return nil }
        let end = min(buffer.count, position + max)
        defer { position = end }
        return buffer[position..<end]
    }

    /// The next request head, or `nil` when the connection ends first.
    mutating func head() -> PeerRequestHead? {
        guard let requestLine = line() else { return nil }
        let parts = requestLine.split(separator: " ")
        guard parts.count == 3 else { return nil }
        var fields: [(name: String, value: String)] = []
        while let field = line(), !field.isEmpty {
            let pair = field.split(separator: ":", maxSplits: 1)
            guard pair.count == 2 else { return nil }
            fields.append((String(pair[0]), pair[1].trimmingCharacters(in: .whitespaces)))
        }
        return PeerRequestHead(method: String(parts[0]), path: String(parts[1]), fields: fields)
    }
}

/// Reads a request body's payload, framed by `Content-Length` or the chunked coding.
struct PeerBodyFraming {
    private let chunked: Bool
    private var remaining: Int
    /// The body was read to its end.
    private(set) var done: Bool

    init(_ head: PeerRequestHead) {
        chunked = head.value("transfer-encoding")?.lowercased() == "chunked"
        remaining = chunked ? 0 : Int(head.value("content-length") ?? "0") ?? 0
        done = !chunked && remaining == 0
    }

    /// Reads payload into `body` until it holds `limit` octets or the body ends; `false` when the
    /// connection ended (or the framing broke) first.
    mutating func read(_ reader: inout PeerReader, upTo limit: Int, into body: inout Data) -> Bool {
        while body.count < limit, !done {
            if chunked, remaining == 0 {
                guard let line = reader.line(), let size = Int(line.split(separator: ";").first ?? "", radix: 16) else { return false }
                if size == 0 {
                    while let trailer = reader.line(), !trailer.isEmpty {}
                    done = true
                    return true
                }
                remaining = size
            }
            guard let piece = reader.take(max: min(remaining, limit - body.count)) else { return false }
            body.append(contentsOf: piece)
            remaining -= piece.count
            if remaining == 0 {
                if chunked {
                    guard reader.line() == "" else { return false }
                } else {
                    done = true
                }
            }
        }
        return true
    }
}

/// What the kernel holds of a loopback TCP connection's data in flight toward a server socket.
enum KernelQueues {
    /// The octets waiting unread in the server's socket `fd` plus those in its client's send
    /// queue (from `/proc/net/tcp`; the client is a socket of this machine).
    static func held(by fd: Int32) -> Int {
        var unread: Int32 = 0
        _ = ioctl(fd, UInt(FIONREAD), &unread)
        var address = sockaddr_in()
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        var local = sockaddr_in()
        var localLength = length
        let known = withUnsafeMutablePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getpeername(fd, $0, &length) == 0 }
        } && withUnsafeMutablePointer(to: &local) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(fd, $0, &localLength) == 0 }
        }
        guard known else { return Int(unread) }
        let (clientPort, serverPort) = (Int(UInt16(bigEndian: address.sin_port)), Int(UInt16(bigEndian: local.sin_port)))
        let table = String(decoding: TCPSocketTable.wholeFile("/proc/net/tcp") ?? [], as: UTF8.self)
        for line in table.split(separator: "\n").dropFirst() {
            let columns = line.split(separator: " ")
            guard columns.count > 4,
                  Int(columns[1].split(separator: ":").last ?? "", radix: 16) == clientPort,
                  Int(columns[2].split(separator: ":").last ?? "", radix: 16) == serverPort,
                  let queued = Int(columns[4].split(separator: ":").first ?? "", radix: 16) else { continue }
            return Int(unread) + queued
        }
        return Int(unread)
    }
}
