// libFuzzer target: CourierHTTP2's HTTP2ConnectionStateMachine, the client side of a
// connection, driven by a hostile server (see Fuzz/README.md).
//
// The input is what the server sends. It is fed one frame at a time (as the frame headers'
// lengths cut it), and between frames the client acts: it opens streams, sends request bodies,
// cancels, pauses and resumes. Everything the machine reports and writes is checked against a
// model kept here, written independently of the machine.
import CourierHTTP2

/// What the fuzzer knows of one stream the client opened.
struct StreamRecord {
    /// The request's fields, as given to `openStream`.
    var requestFields: [HPACKHeaderField]
    /// Request body octets handed to the machine, and whether END_STREAM was given.
    var bodyGiven: [UInt8] = []
    var endGiven: Bool
    /// How far the machine wrote the request's field block.
    var headers = WrittenHeaders.notYet
    /// Request body octets the machine wrote in DATA frames, and whether END_STREAM was written.
    var bodyWritten: [UInt8] = []
    var endWritten = false
    /// What the machine reported of the response.
    var head = false
    var trailers = false
    /// The stream ended: a terminal action, or the client's cancel.
    var ended = false
    /// The client wrote RST_STREAM for it.
    var resetWritten = false
    /// Whether the client paused reading it.
    var paused = false
    /// The client's send window for it, as the server granted it.
    var sendWindow: Int
    /// The server's send window for it, as the client granted it.
    var receiveWindow: Int
}

/// One run of the machine against one input, with the model that checks it.
struct ConnectionRun {
    var machine: HTTP2ConnectionStateMachine
    let configuration: HTTP2ConnectionStateMachine.Configuration
    var random: SplitMix64
    var streams: [UInt32: StreamRecord] = [:]
    /// Whether the machine reported `closeConnection`, or the transport was closed.
    var closed = false

    /// Parses what the client writes, as a server would.
    var written = HTTP2FrameParser(role: .server, maxFrameSize: 16_777_215, maxFieldBlockSize: 1 << 24, maxContinuationFrames: 1 << 20)
    /// Decodes the client's field blocks, as a server would.
    var fieldDecoder = HPACKDecoder(maxTableSize: 4096, maxHeaderListSize: 1 << 24, maxStringLength: 1 << 24)
    /// A field block the client is writing: its stream and octets so far.
    var writtenBlock: (streamID: UInt32, bytes: [UInt8])?

    /// Parses what the server sends, to follow its settings and windows.
    var received = HTTP2FrameParser(role: .client)
    var peerInitialWindow = 65_535
    var peerMaxFrameSize = 16_384
    /// The server's SETTINGS_MAX_CONCURRENT_STREAMS, and whether it sent GOAWAY.
    var peerStreamLimit = Int.max
    var goAwayReceived = false
    /// The payload of the DATA frame just received, and the PINGs not acknowledged yet.
    var receivedData: (streamID: UInt32, data: [UInt8])?
    var unansweredPings: [UInt64] = []
    var connectionSendWindow = 65_535
    /// The server's send window on the connection, as the client granted it.
    var connectionReceiveWindow = 65_535

    init(seed: UInt64) {
        random = SplitMix64(seed: seed)
        var configuration = HTTP2ConnectionStateMachine.Configuration()
        // Small windows and limits half the time, so that short inputs reach them.
        if seed & 2 == 0 {
            configuration.initialWindowSize = 16 + random.next(upTo: 4096)
            configuration.connectionWindowSize = 65_535
            configuration.maxPingsWithoutData = 1 + random.next(upTo: 4)
            configuration.maxSettingsWithoutData = 1 + random.next(upTo: 4)
            configuration.maxHeaderListSize = 64 + random.next(upTo: 1024)
        }
        // Half the inputs give stream windows back the way the native client does: after the
        // driver delivered a read's DATA (returnStreamWindows), not while the machine parses it.
        configuration.returnsStreamWindowsOnReceive = seed & 4 == 0
        self.configuration = configuration
        machine = HTTP2ConnectionStateMachine(configuration: configuration)
    }

    // MARK: Events

    mutating func start() {
        apply(machine.start(), after: "start")  // its WINDOW_UPDATE raises connectionReceiveWindow
        received.maxFrameSize = configuration.maxFrameSize  // the machine's parser, once its SETTINGS are acknowledged
    }

    /// Feeds one frame's octets (or the incomplete rest of the input) to the machine.
    mutating func receive(_ bytes: [UInt8]) {
        let wasClosed = closed
        receivedData = nil
        // The model follows the frame first: the machine's writes answer it.
        if !closed { follow(bytes) }
        var actions = machine.receive(bytes)
        if !configuration.returnsStreamWindowsOnReceive { actions += machine.returnStreamWindows() }
        if wasClosed { invariant(actions.isEmpty, "a closed machine acted on input: \(actions)") }
        apply(actions, after: "a received frame")
    }

    mutating func openStream() {
        let available = machine.availableStreamCount
        var fields = [HPACKHeaderField(name: ":method", value: random.next(upTo: 1) == 0 ? "GET" : "POST"),
                      HPACKHeaderField(name: ":scheme", value: "https"),
                      HPACKHeaderField(name: ":authority", value: "example.com"),
                      HPACKHeaderField(name: ":path", value: "/\(random.next(upTo: 1000))")]
        let indexings: [HPACKIndexing] = [.automatic, .withoutIndexing, .never]
        for _ in 0..<random.next(upTo: 3) {
            let value = String(repeating: "v", count: random.next(upTo: 300))
            fields.append(HPACKHeaderField(name: "x-field-\(random.next(upTo: 5))", value: value,
                                           indexing: indexings[random.next(upTo: 2)]))
        }
        let endStream = random.next(upTo: 1) == 0
        guard let opened = machine.openStream(headers: fields, endStream: endStream) else {
            invariant(available == 0, "openStream refused although \(available) streams were available")
            return
        }
        let (id, actions) = opened
        invariant(available > 0 && !closed, "openStream opened a stream when none was available")
        invariant(!goAwayReceived, "openStream opened a stream after the server's GOAWAY")
        invariant(streams.values.count { !$0.ended } < peerStreamLimit,
                  "openStream went over the server's SETTINGS_MAX_CONCURRENT_STREAMS of \(peerStreamLimit)")
        invariant(id & 1 == 1 && streams[id] == nil && streams.keys.allSatisfy { $0 < id }, "stream id \(id) is not new and odd")
        streams[id] = StreamRecord(requestFields: fields, endGiven: endStream,
                                   sendWindow: peerInitialWindow, receiveWindow: configuration.initialWindowSize)
        apply(actions, after: "openStream")
        invariant(streams[id]!.headers == .complete, "openStream did not write the whole field block")
    }

    mutating func sendBody() {
        guard let id = pick() else { return }
        let accepted = machine.isOpen(id) && !streams[id]!.endGiven
        let bytes = (0..<random.next(upTo: 3) * random.next(upTo: 8_000)).map { UInt8(truncatingIfNeeded: $0 &* 31) }
        let endStream = random.next(upTo: 2) == 0
        if accepted {
            streams[id]!.bodyGiven += bytes
            streams[id]!.endGiven = endStream
        }
        let actions = machine.sendBody(streamID: id, bytes, endStream: endStream)
        if !accepted { invariant(actions.isEmpty, "sendBody on a finished or closed stream wrote \(actions)") }
        apply(actions, after: "sendBody")
    }

    mutating func cancel() {
        guard let id = pick() else { return }
        let wasOpen = machine.isOpen(id) && !closed
        let actions = machine.cancelStream(id)
        if wasOpen {
            invariant(actions.first == .write(HTTP2Frame.rstStream(streamID: id, code: .cancel).serialized),
                      "cancelStream did not write RST_STREAM(CANCEL): \(actions)")
            streams[id]!.ended = true
        } else {
            invariant(actions.isEmpty, "cancelStream on a finished stream acted: \(actions)")
        }
        apply(actions, after: "cancelStream")
    }

    mutating func pause() {
        guard let id = pick() else { return }
        machine.pauseStream(id)
        if !streams[id]!.ended { streams[id]!.paused = true }
    }

    mutating func resume() {
        guard let id = pick() else { return }
        let actions = machine.resumeStream(id)
        if !streams[id]!.ended { streams[id]!.paused = false }
        apply(actions, after: "resumeStream")
    }

    mutating func settingsTimedOut() {
        apply(machine.settingsTimedOut(), after: "settingsTimedOut")
    }

    /// The end of the input: the transport closes, and every stream still open fails.
    mutating func finish() {
        let actions = machine.transportClosed(reason: "the input ended")
        invariant(!closed || actions.isEmpty, "transportClosed on a closed machine acted: \(actions)")
        for action in actions {
            guard case .streamFailed = action else { invariant(false, "transportClosed did \(action)"); return }
        }
        apply(actions, after: "transportClosed")
        closed = true
        invariant(machine.isClosed, "the machine is not closed after transportClosed")
        invariant(streams.values.allSatisfy(\.ended), "a stream never ended: \(streams.filter { !$0.value.ended }.keys.sorted())")
        invariant(machine.openStreamCount == 0 && machine.availableStreamCount == 0, "a closed machine has streams")
        invariant(machine.receive([0, 0, 0, 4, 0, 0, 0, 0, 0]).isEmpty, "a closed machine acted on input")
    }

    /// A stream the client opened, or `nil` before the first.
    private mutating func pick() -> UInt32? {
        guard !streams.isEmpty else { return nil }
        let ids = streams.keys.sorted()
        return ids[random.next(upTo: ids.count - 1)]
    }

    // MARK: The machine's actions

    mutating func apply(_ actions: [HTTP2ConnectionAction], after event: String) {
        for (index, action) in actions.enumerated() {
            invariant(!closed, "\(event): an action after the connection closed: \(action)")
            switch action {
            case .write(let bytes):
                invariant(!bytes.isEmpty, "\(event): an empty write")
                check(written: bytes)
            case .responseHead(let id, let status, _):
                invariant(streams[id].map { !$0.ended && !$0.head } ?? false, "\(event): a head for stream \(id) out of turn")
                invariant((200...599).contains(status), "\(event): reported status \(status)")
                streams[id]!.head = true
            case .responseData(let id, let data):
                invariant(receivedData.map { $0.streamID == id && $0.data == data } ?? false,
                          "\(event): reported data for stream \(id) that is not the DATA frame just received")
                receivedData = nil
                invariant(streams[id].map { !$0.ended && $0.head && !$0.trailers } ?? false, "\(event): data for stream \(id) out of turn")
                invariant(!data.isEmpty, "\(event): empty response data reported")
            case .responseTrailers(let id, _):
                invariant(streams[id].map { !$0.ended && $0.head && !$0.trailers } ?? false, "\(event): trailers for stream \(id) out of turn")
                streams[id]!.trailers = true
            case .streamFinished(let id):
                invariant(streams[id].map { !$0.ended && $0.head } ?? false, "\(event): stream \(id) finished out of turn")
                streams[id]!.ended = true
            case .streamFailed(let id, _):
                invariant(streams[id].map { !$0.ended } ?? false, "\(event): stream \(id) failed twice or was never opened")
                streams[id]!.ended = true
            case .closeConnection:
                invariant(index == actions.count - 1, "\(event): actions after closeConnection")
                invariant(machine.isClosed, "\(event): closeConnection, but the machine is open")
                invariant(streams.values.allSatisfy(\.ended), "\(event): the connection closed with streams open")
                closed = true
            }
        }
        if machine.isClosed {
            invariant(closed || event == "transportClosed", "\(event): the machine closed without saying so")
        }
        for (id, record) in streams {
            invariant(machine.isOpen(id) == !record.ended, "\(event): the machine and the model disagree on stream \(id)")
            if !record.ended, !record.paused, !closed {
                invariant(record.receiveWindow > configuration.initialWindowSize / 2,
                          "\(event): stream \(id) was not given its window back (\(record.receiveWindow) left)")
            }
        }
        invariant(machine.openStreamCount == streams.values.count { !$0.ended }, "\(event): open stream counts differ")
        if !closed { checkBodiesMove(after: event) }
        if !closed {
            invariant(connectionReceiveWindow > Swift.max(configuration.connectionWindowSize, 65_535) / 2,
                      "\(event): the connection window was not given back (\(connectionReceiveWindow) left)")
        }
    }

    /// A request body never waits while the windows have room: after every event, each open
    /// stream has written all the body it was given (and END_STREAM once given), or its window or
    /// the connection's is used up.
    private func checkBodiesMove(after event: String) {
        for (id, record) in streams where !record.ended && !record.resetWritten && record.headers == .complete {
            let waiting = record.bodyGiven.count - record.bodyWritten.count
            if waiting > 0 {
                invariant(record.sendWindow <= 0 || connectionSendWindow <= 0,
                          "\(event): stream \(id) holds \(waiting) body octets although its window (\(record.sendWindow)) and the connection's (\(connectionSendWindow)) are open")
            } else {
                invariant(!record.endGiven || record.endWritten, "\(event): stream \(id)'s END_STREAM was given but not written")
            }
        }
    }

    /// Checks the client's octets as a server would read them.
    private mutating func check(written bytes: [UInt8]) {
        written.append(bytes)
        while true {
            let frame: HTTP2Frame?
            do {
                frame = try written.nextFrame()
            } catch {
                invariant(false, "the client wrote a frame a server rejects: \(error)")
                return
            }
            guard let frame else { return }
            check(written: frame)
        }
    }

    private mutating func check(written frame: HTTP2Frame) {
        switch frame {
        case .headers(let id, let block, let endStream, let endHeaders, _, _):
            invariant(streams[id]?.headers == .notYet, "HEADERS for stream \(id) out of turn")
            invariant(block.count <= peerMaxFrameSize, "a HEADERS frame exceeds the server's SETTINGS_MAX_FRAME_SIZE")
            streams[id]!.headers = .started
            streams[id]!.endWritten = endStream
            invariant(endStream == streams[id]!.endGiven, "HEADERS' END_STREAM differs from the request's")
            writtenBlock = (id, block)
            if endHeaders { decodeWrittenBlock() }
        case .continuation(let id, let block, let endHeaders):
            invariant(block.count <= peerMaxFrameSize, "a CONTINUATION frame exceeds the server's SETTINGS_MAX_FRAME_SIZE")
            writtenBlock!.bytes += block
            if endHeaders { decodeWrittenBlock() } else { invariant(writtenBlock!.streamID == id, "CONTINUATION on another stream") }
        case .data(let id, let data, let endStream, let padding):
            guard let record = streams[id] else { invariant(false, "DATA on stream \(id), never opened"); return }
            invariant(record.headers == .complete && !record.endWritten && !record.resetWritten && padding == nil,
                      "DATA on stream \(id) out of turn")
            invariant(data.count <= peerMaxFrameSize, "a DATA frame exceeds the server's SETTINGS_MAX_FRAME_SIZE")
            invariant(data.isEmpty || (data.count <= record.sendWindow && data.count <= connectionSendWindow),
                      "DATA of \(data.count) octets beyond the windows (stream \(record.sendWindow), connection \(connectionSendWindow))")
            streams[id]!.sendWindow -= data.count
            connectionSendWindow -= data.count
            streams[id]!.bodyWritten += data
            let written = streams[id]!.bodyWritten
            invariant(written.count <= record.bodyGiven.count && record.bodyGiven.starts(with: written),
                      "stream \(id)'s DATA is not what the caller gave")
            if endStream {
                invariant(record.endGiven && written.count == record.bodyGiven.count, "END_STREAM before the whole body")
                streams[id]!.endWritten = true
            }
        case .rstStream(let id, _):
            invariant(streams[id] != nil, "RST_STREAM on stream \(id), never opened")
            streams[id]!.resetWritten = true
        case .windowUpdate(let id, let increment):
            invariant(increment > 0, "a WINDOW_UPDATE of 0 on stream \(id)")
            if id == 0 {
                connectionReceiveWindow += Int(increment)
            } else if streams[id] != nil {
                invariant(!streams[id]!.paused, "a WINDOW_UPDATE for stream \(id), which its reader paused")
                streams[id]!.receiveWindow += Int(increment)
            } else {
                invariant(false, "WINDOW_UPDATE on stream \(id), never opened")
            }
        case .ping(let opaque, let ack):
            invariant(ack, "the client sent a PING of its own")
            guard let index = unansweredPings.firstIndex(of: opaque) else {
                invariant(false, "a PING acknowledgement echoes no PING the server sent")
                return
            }
            unansweredPings.remove(at: index)
        case .settings, .settingsAck, .goAway:
            break
        case .priority, .pushPromise:
            invariant(false, "the client wrote \(frame)")
        }
    }

    private mutating func decodeWrittenBlock() {
        guard let pending = writtenBlock else { return }
        let (id, block) = (pending.streamID, pending.bytes)
        writtenBlock = nil
        do {
            let fields = try fieldDecoder.decode(block)
            invariant(fields == streams[id]!.requestFields, "the request's fields did not round-trip through HPACK")
            streams[id]!.headers = .complete
        } catch {
            invariant(false, "a server cannot decode the client's field block: \(error)")
        }
    }

    // MARK: The server's frames, followed

    /// Follows the server's settings and window updates, and what its DATA takes from the
    /// windows the client granted.
    private mutating func follow(_ bytes: [UInt8]) {
        received.append(bytes)
        while true {
            let frame: HTTP2Frame?
            do {
                frame = try received.nextFrame()
            } catch {
                if error.isConnectionError { return }
                continue  // a stream error: the machine resets the stream and reads on
            }
            guard let frame else { return }
            switch frame {
            case .settings(let settings):
                for setting in settings {
                    switch setting.identifier {
                    case .initialWindowSize:
                        let delta = Int(setting.value) - peerInitialWindow
                        for id in streams.keys where !streams[id]!.ended { streams[id]!.sendWindow += delta }
                        peerInitialWindow = Int(setting.value)
                    case .maxConcurrentStreams:
                        peerStreamLimit = Int(setting.value)
                    case .maxFrameSize:
                        peerMaxFrameSize = Int(setting.value)
                    case .headerTableSize:
                        fieldDecoder.setMaxTableSizeLimit(Int(setting.value))  // the client acknowledges at once
                    default:
                        break
                    }
                }
            case .windowUpdate(let id, let increment):
                if id == 0 {
                    connectionSendWindow += Int(increment)
                } else if streams[id].map({ !$0.ended }) ?? false {
                    streams[id]!.sendWindow += Int(increment)
                }
            case .goAway:
                goAwayReceived = true
            case .ping(let opaque, false):
                unansweredPings.append(opaque)
            case .data(let id, let data, _, _):
                receivedData = (id, data)
                connectionReceiveWindow -= frame.flowControlledLength
                if streams[id].map({ !$0.ended }) ?? false { streams[id]!.receiveWindow -= frame.flowControlledLength }
            default:
                break
            }
        }
    }
}

/// How far the client wrote a request's field block.
enum WrittenHeaders {
    case notYet, started, complete
}

/// The octets of each frame in `input`, cut by the lengths in the frame headers (an incomplete
/// frame at the end is one more piece).
func framePieces(_ input: UnsafeRawBufferPointer) -> [[UInt8]] {
    var result: [[UInt8]] = []
    var start = 0
    while start < input.count {
        var end = input.count
        if input.count - start >= 9 {
            let length = Int(input[start]) << 16 | Int(input[start + 1]) << 8 | Int(input[start + 2])
            end = Swift.min(input.count, start + 9 + length)
        }
        result.append(Array(input[start..<end]))
        start = end
    }
    return result
}

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzz(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    let input = UnsafeRawBufferPointer(start: data, count: size)
    var run = ConnectionRun(seed: inputHash(input))
    run.start()
    run.openStream()
    run.openStream()
    for piece in framePieces(input) {
        for _ in 0..<run.random.next(upTo: 2) {
            switch run.random.next(upTo: 15) {
            case 0...2: run.openStream()
            case 3...6: run.sendBody()
            case 7: run.cancel()
            case 8: run.pause()
            case 9...10: run.resume()
            case 11 where run.random.next(upTo: 15) == 0: run.settingsTimedOut()
            default: break
            }
        }
        run.receive(piece)
    }
    run.finish()
    return 0
}
