import CourierTestSupport
import CourierHTTP2
import Foundation
import Synchronization
#if canImport(Glibc)
import Glibc
#endif

/// A frame-level HTTP/2 server for fault tests: it listens on 127.0.0.1 (port 0), speaks h2c
/// (clients use ``NativeTransport/HTTPVersionPolicy/http2PriorKnowledge``), and runs a script
/// on each accepted connection, on a thread of its own. The script reads the client's frames
/// and sends what the test wants, well-formed or not (``HTTP2PeerConnection``).
///
/// Every read waits at most 10 s, so a script never hangs a test; ``close()`` ends everything.
final class HTTP2ScriptedPeer: Sendable {
    /// What runs on each accepted connection: its index (0 for the first) and the connection.
    typealias Script = @Sendable (Int, HTTP2PeerConnection) throws -> Void

    let port: Int
    private let listener: Int32
    private let accepted = Locked<[Int32]>([])
    private let state = Locked(State())

    private struct State {
        var connections = 0
        var mostOpenStreams = 0
        var streamsOpened = 0
    }

    /// Starts listening.
    init(script: @escaping Script) throws {
        let (listener, port) = try LoopbackPort.listening(backlog: 64)
        self.listener = listener
        self.port = port
        let thread = Thread { [listener, accepted, state] in
            while true {
                let client = accept(listener, nil, nil)
                guard client >= 0 else { return }
                // Frames go out as the script sends them: no Nagle delay between HEADERS and DATA.
                var on: Int32 = 1
                setsockopt(client, Int32(IPPROTO_TCP), TCP_NODELAY, &on, socklen_t(MemoryLayout<Int32>.size))
                accepted.withLock { $0.append(client) }
                let index = state.withLock { state -> Int in
                    defer { state.connections += 1 }
                    return state.connections
                }
                let worker = Thread {
                    let connection = HTTP2PeerConnection(fd: client) { open in
                        state.withLock {
                            $0.mostOpenStreams = max($0.mostOpenStreams, open)
                            $0.streamsOpened += 1
                        }
                    }
                    try? script(index, connection)
                    accepted.withLock { descriptors in
                        descriptors.removeAll { $0 == client }
                        Glibc.shutdown(client, Int32(SHUT_RDWR))
                        Glibc.close(client)
                    }
                }
                worker.start()
            }
        }
        thread.start()
    }

    deinit {
        close()
        Glibc.close(listener)
    }

    /// `http://127.0.0.1:<port>`.
    var baseURL: URL { URL(string: "http://127.0.0.1:\(port)")! }

    /// A URL on the peer.
    func url(_ path: String) -> URL { URL(string: baseURL.absoluteString + path)! }

    /// How many connections it accepted.
    var connectionsAccepted: Int { state.withLock { $0.connections } }

    /// The most streams a connection had open at once, as ``HTTP2PeerConnection/serve()`` saw them.
    var mostOpenStreams: Int { state.withLock { $0.mostOpenStreams } }

    /// Stops accepting and closes every connection.
    func close() {
        Glibc.shutdown(listener, Int32(SHUT_RDWR))
        // Under the lock: a connection's thread closes its descriptor under it too, so a number
        // shut down here is never one the process reused since.
        accepted.withLock { descriptors in
            for fd in descriptors { Glibc.shutdown(fd, Int32(SHUT_RDWR)) }
        }
    }
}

/// One accepted connection of an ``HTTP2ScriptedPeer``, used by its script on one thread.
final class HTTP2PeerConnection: @unchecked Sendable {  // used by one thread only: its script's
    /// A request the peer received.
    struct Request {
        let streamID: UInt32
        let fields: [HPACKHeaderField]
        let body: [UInt8]
        /// The `:path` field.
        var path: String { fields.first { $0.name == ":path" }?.value ?? "" }
    }

    let fd: Int32
    private var parser = HTTP2FrameParser(role: .server, maxFrameSize: (1 << 24) - 1)
    private var encoder = HPACKEncoder()
    private var decoder = HPACKDecoder()
    private let opened: @Sendable (Int) -> Void
    private var buffer = [UInt8](repeating: 0, count: 65_536)
    /// Requests whose HEADERS arrived but not their END_STREAM yet.
    private var partial: [UInt32: (fields: [HPACKHeaderField], body: [UInt8])] = [:]
    /// Streams the client opened that were neither answered nor reset.
    private var unanswered: Set<UInt32> = []
    private var complete: [Request] = []

    init(fd: Int32, opened: @escaping @Sendable (Int) -> Void) {
        self.fd = fd
        self.opened = opened
    }

    /// Reads the client preface and SETTINGS, then sends the peer's SETTINGS and, when
    /// `acknowledge`, the ACK of the client's.
    func start(settings: [HTTP2Setting] = [], acknowledge: Bool = true) throws {
        guard let first = try nextFrame(), case .settings = first else { throw PeerError("no client SETTINGS") }
        send(.settings(settings))
        if acknowledge { send(.settingsAck) }
    }

    /// The next frame from the client, or `nil` when it closed (or 10 s passed).
    func nextFrame() throws -> HTTP2Frame? {
        while true {
            if let frame = try parser.nextFrame() { return frame }
            var poller = pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
            guard poll(&poller, 1, 10_000) > 0 else { return nil }
            let count = buffer.withUnsafeMutableBytes { read(fd, $0.baseAddress, $0.count) }
            guard count > 0 else { return nil }
            parser.append(buffer[..<count])
        }
    }

    /// What ``nextFrame(waitingAtMost:)`` found.
    enum Arrival {
        case frame(HTTP2Frame)
        /// Nothing came within the wait.
        case nothing
        /// The client closed the connection.
        case closed
    }

    /// The next frame from the client if one comes within `milliseconds` (0: only one already
    /// here), for a script that sends while it listens.
    func nextFrame(waitingAtMost milliseconds: Int32) throws -> Arrival {
        while true {
            if let frame = try parser.nextFrame() { return .frame(frame) }
            var poller = pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
            guard poll(&poller, 1, milliseconds) > 0 else { return .nothing }
            let count = buffer.withUnsafeMutableBytes { read(fd, $0.baseAddress, $0.count) }
            guard count > 0 else { return .closed }
            parser.append(buffer[..<count])
        }
    }

    /// The fields of a request's field block, from the peer's HPACK decoder (for a script that
    /// reads frames itself with ``nextFrame(waitingAtMost:)``).
    func decodeFields(_ block: [UInt8]) -> [HPACKHeaderField] {
        (try? decoder.decode(block)) ?? []
    }

    /// The next complete request (HEADERS, DATA until END_STREAM), acknowledging SETTINGS and
    /// answering nothing else; `nil` when the client closed.
    func nextRequest() throws -> Request? {
        while complete.isEmpty {
            guard let frame = try nextFrame() else { return nil }
            absorb(frame)
        }
        return complete.removeFirst()
    }

    /// Takes in the frames that arrive within 2 ms, without waiting longer.
    func absorbPending() throws {
        while true {
            if let frame = try parser.nextFrame() {
                absorb(frame)
                continue
            }
            var poller = pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
            guard poll(&poller, 1, 2) > 0 else { return }
            let count = buffer.withUnsafeMutableBytes { read(fd, $0.baseAddress, $0.count) }
            guard count > 0 else { return }
            parser.append(buffer[..<count])
        }
    }

    /// Takes a client frame into the requests being assembled.
    private func absorb(_ frame: HTTP2Frame) {
        switch frame {
        case .headers(let id, let block, let end, _, _, _):
            let fields = (try? decoder.decode(block)) ?? []
            partial[id] = (fields, [])
            unanswered.insert(id)
            opened(unanswered.count)
            if end { completeRequest(id) }
        case .data(let id, let data, let end, _):
            partial[id]?.body += data
            if !data.isEmpty {
                send(.windowUpdate(streamID: 0, increment: UInt32(data.count)))
                if !end { send(.windowUpdate(streamID: id, increment: UInt32(data.count))) }
            }
            if end { completeRequest(id) }
        case .settings:
            send(.settingsAck)
        case .rstStream(let id, _):
            partial[id] = nil
            unanswered.remove(id)
        default:
            break
        }
    }

    private func completeRequest(_ id: UInt32) {
        guard let request = partial.removeValue(forKey: id) else { return }
        complete.append(Request(streamID: id, fields: request.fields, body: request.body))
    }

    /// A field block for `fields`, from the peer's HPACK encoder.
    func fieldBlock(_ fields: [(String, String)]) -> [UInt8] {
        var block: [UInt8] = []
        encoder.encode(fields.map { HPACKHeaderField(name: $0.0, value: $0.1) }, into: &block)
        return block
    }

    /// Answers a request: HEADERS with `:status` and `headers`, then the body in DATA frames of
    /// at most 16 KiB (HEADERS alone ends the stream when the body is empty and `end` is set).
    func respond(_ streamID: UInt32, status: Int = 200, headers: [(String, String)] = [], body: [UInt8] = [], end: Bool = true) {
        if end { unanswered.remove(streamID) }
        let block = fieldBlock([(":status", String(status))] + headers)
        send(.headers(streamID: streamID, fieldBlock: block, endStream: end && body.isEmpty, endHeaders: true))
        var offset = 0
        while offset < body.count {
            let next = min(offset + 16_384, body.count)
            send(.data(streamID: streamID, data: Array(body[offset..<next]), endStream: end && next == body.count))
            offset = next
        }
    }

    /// Answers every request with 200 and its path as the body, until the client closes; records
    /// how many streams were open at once.
    func serve() throws {
        while let request = try nextRequest() {
            // Whatever the client sent meanwhile counts toward the streams open at once.
            try absorbPending()
            respond(request.streamID, body: Array(request.path.utf8))
        }
    }

    /// Writes frames.
    func send(_ frames: HTTP2Frame...) {
        var bytes: [UInt8] = []
        for frame in frames { frame.serialize(into: &bytes) }
        sendRaw(bytes)
    }

    /// Writes octets as they are.
    func sendRaw(_ bytes: [UInt8]) {
        var offset = 0
        while offset < bytes.count {
            let written = bytes[offset...].withUnsafeBytes { Glibc.send(fd, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
            guard written > 0 else { return }
            offset += written
        }
    }

    /// Closes the connection at once, once what the peer already sent has reached the client
    /// (its kernel acknowledged it, waiting at most 2 s): the descriptor's close resets the
    /// connection when client bytes lie unread, and a reset discards whatever is still queued to
    /// send, which would take back frames the peer logged as sent (on a loaded machine the
    /// kernel may hold a small write back for a moment).
    func close() {
        Glibc.shutdown(fd, Int32(SHUT_RDWR))
        ThreadedListener.awaitDelivery(fd)
    }
}

/// A script's complaint about what the client sent.
struct PeerError: Error, CustomStringConvertible {
    let description: String
    init(_ description: String) { self.description = description }
}
