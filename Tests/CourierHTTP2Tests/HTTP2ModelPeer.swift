@testable import CourierHTTP2
import CourierTestServer

/// The server of a model conversation: legal under RFC 9113, its moves picked at random. It
/// keeps its own view of the connection, written from the RFC and not from the client machine:
/// the windows in both directions (§5.2, §6.9, a changed SETTINGS_INITIAL_WINDOW_SIZE applied
/// to every stream once the client acknowledges it, §6.9.2), the stream limit the client
/// acknowledged (§5.1.2), and the PINGs and SETTINGS awaiting acknowledgement; every frame
/// the client writes is checked against that view, and what breaks it is a `violation`.
struct HTTP2ModelPeer {
    /// What the peer knows of one stream the client opened.
    struct Stream {
        /// The request's index in the plan.
        let request: Int
        /// The request body octets received so far, and whether END_STREAM came.
        var upload: [UInt8] = []
        var requestEnded: Bool
        /// How many octets the client may still send on it, and the peer.
        var receiveWindow: Int
        var sendWindow: Int
        /// How far the response went.
        var interimSent = false
        var headSent = false
        var bodySent = 0
        var responseEnded = false
        /// Whether any response frame went out (after which REFUSED_STREAM is no longer legal).
        var answered: Bool { interimSent || headSent }
    }

    let plan: [HTTP2ModelRequest]
    /// Whether frames cross on the wire (a peer over a socket): then the client may still write
    /// on a stream the peer reset or dropped with GOAWAY, and request heads carry more fields
    /// than the plan's (only `:method` and `:path` are checked).
    let crossing: Bool
    /// Everything the client did that RFC 9113 (or the plan) forbids.
    var violations: [String] = []
    /// The last frames in both directions, briefly, for failure messages.
    private(set) var trace: [String] = []
    private var parser = HTTP2FrameParser(role: .server, maxFrameSize: 16_384)
    private var decoder = HPACKDecoder()
    private var encoder = HPACKEncoder()
    /// Open streams (neither side finished them, nobody reset them).
    var streams: [UInt32: Stream] = [:]
    /// Streams the client reset with CANCEL whose RST_STREAM the peer has "not read yet": it
    /// may still send response frames on them, as a real peer with frames in flight does.
    var cancelledInFlight: [UInt32: Stream] = [:]
    /// The streams the peer reset.
    private var peerResets: Set<UInt32> = []
    /// The requests (plan indices) whose streams the peer did not process, in order: refused
    /// with REFUSED_STREAM, above a GOAWAY's last stream id, or opened after the GOAWAY.
    private(set) var unprocessed: [Int] = []
    /// The ids the client reset with CANCEL, in order (the conversation checks its cancels).
    var clientCancels: [UInt32] = []
    /// The client's SETTINGS as they apply to what the peer sends.
    private var clientInitialWindow = 65_535
    var sendConnectionWindow = 65_535
    /// The peer's SETTINGS as the client acknowledged them.
    private(set) var ackedInitialWindow = 65_535
    private(set) var ackedMaxStreams = Int.max
    /// SETTINGS the peer sent that the client has not acknowledged, oldest first.
    private(set) var unackedSettings: [[HTTP2Setting]] = []
    /// Octets the client may still send on the connection.
    var receiveConnectionWindow = 65_535
    /// The client's SETTINGS frames the peer has not acknowledged yet.
    private(set) var clientSettingsToAck = 0
    /// PING opaque data sent and not acknowledged, oldest first.
    private(set) var pendingPings: [UInt64] = []
    /// The highest stream id the client opened.
    private(set) var lastClientStream: UInt32 = 0
    /// The last stream id of the last GOAWAY sent.
    private(set) var goAwayLast: UInt32?
    /// A client field block being assembled (HEADERS without END_HEADERS).
    private var pendingBlock: (streamID: UInt32, endStream: Bool, bytes: [UInt8])?

    /// A peer for a conversation following `plan`.
    /// Whether every DATA frame carries 200 to 255 octets of padding and at most 100 of data, so
    /// that a client that does not count padding against its windows stalls (§6.9.1).
    let paddingHeavy: Bool

    init(plan: [HTTP2ModelRequest], crossing: Bool = false, paddingHeavy: Bool = false) {
        self.plan = plan
        self.crossing = crossing
        self.paddingHeavy = paddingHeavy
    }

    /// Whether the peer ended or dropped `id` itself (RST_STREAM or GOAWAY), so that frames
    /// of the client's that crossed that on the wire are legal.
    private func endedByPeer(_ id: UInt32) -> Bool {
        crossing && (peerResets.contains(id) || goAwayLast.map { id > $0 } == true)
    }

    /// The number of streams the client has open as the peer counts them (§5.1.2: open or
    /// half-closed).
    var openCount: Int { streams.count }

    // MARK: - Reading the client

    /// Reads octets the client wrote and checks each complete frame.
    mutating func read(_ bytes: [UInt8]) {
        parser.append(bytes)
        while true {
            do {
                guard let frame = try parser.nextFrame() else { return }
                check(frame)
            } catch {
                violations.append("the client wrote a frame the server cannot parse: \(error)")
                return
            }
        }
    }

    private mutating func check(_ frame: HTTP2Frame) {
        note("client", frame)
        if let last = goAwayLast, frame.streamID > last, !crossing {
            violations.append("the client wrote \(frame) on stream \(frame.streamID), above the GOAWAY's last stream id \(last)")
        }
        switch frame {
        case .settings(let settings):
            for setting in settings {
                if setting.identifier == .initialWindowSize {
                    let delta = Int(setting.value) - clientInitialWindow
                    for id in streams.keys { streams[id]!.sendWindow += delta }
                    clientInitialWindow = Int(setting.value)
                }
            }
            clientSettingsToAck += 1
        case .settingsAck:
            guard !unackedSettings.isEmpty else {
                violations.append("the client acknowledged SETTINGS the server never sent")
                return
            }
            for setting in unackedSettings.removeFirst() {
                if setting.identifier == .initialWindowSize {
                    let delta = Int(setting.value) - ackedInitialWindow
                    for id in streams.keys { streams[id]!.receiveWindow += delta }
                    ackedInitialWindow = Int(setting.value)
                } else if setting.identifier == .maxConcurrentStreams {
                    ackedMaxStreams = Int(setting.value)
                }
            }
        case .ping(let opaque, let ack):
            guard ack else { return }
            if pendingPings.first == opaque {
                pendingPings.removeFirst()
            } else {
                violations.append("the client acknowledged PING \(opaque), but the server waits for \(pendingPings)")
            }
        case .windowUpdate(0, let increment):
            sendConnectionWindow += Int(increment)
        case .windowUpdate(let id, let increment):
            if streams[id] != nil {
                streams[id]!.sendWindow += Int(increment)
            } else if cancelledInFlight[id] == nil, !endedByPeer(id) {
                violations.append("the client wrote WINDOW_UPDATE on stream \(id), which is not open")
            }
        case .headers(let id, let block, let endStream, let endHeaders, _, _):
            if endHeaders {
                opened(id, block, endStream: endStream)
            } else {
                pendingBlock = (id, endStream, block)
            }
        case .continuation(let id, let block, let endHeaders):
            guard var pending = pendingBlock, pending.streamID == id else {
                violations.append("the client wrote a CONTINUATION that follows no HEADERS")
                return
            }
            pending.bytes += block
            pendingBlock = pending
            if endHeaders {
                pendingBlock = nil
                opened(id, pending.bytes, endStream: pending.endStream)
            }
        case .data(let id, let data, let endStream, _):
            received(id, data, length: frame.flowControlledLength, endStream: endStream)
        case .rstStream(let id, let code):
            guard code == .cancel, var stream = streams.removeValue(forKey: id) else {
                if endedByPeer(id) { return }
                violations.append("the client reset stream \(id) with \(code) (a legal server gave it no reason)")
                return
            }
            stream.requestEnded = true
            cancelledInFlight[id] = stream
            clientCancels.append(id)
        case .goAway(_, let code, _):
            violations.append("the client ended the connection with GOAWAY \(code)")
        case .priority:
            break
        case .pushPromise:
            violations.append("the client wrote PUSH_PROMISE")
        }
    }

    /// A complete request head: a new stream, within the limit the client acknowledged.
    private mutating func opened(_ id: UInt32, _ block: [UInt8], endStream: Bool) {
        guard id & 1 == 1, id > lastClientStream else {
            violations.append("the client opened stream \(id) after \(lastClientStream)")
            return
        }
        lastClientStream = id
        if goAwayLast != nil {
            // A head that crossed the GOAWAY is still decoded, to keep HPACK in step.
            guard crossing else { return violations.append("the client opened stream \(id) after GOAWAY") }
            if let index = (try? decoder.decode(block)).flatMap(Self.requestIndex) { unprocessed.append(index) }
            return
        }
        if streams.count + 1 > ackedMaxStreams {
            violations.append("the client opened stream \(id) with \(streams.count) open, but the limit is \(ackedMaxStreams)")
        }
        guard let fields = try? decoder.decode(block), let index = Self.requestIndex(fields), plan.indices.contains(index) else {
            violations.append("stream \(id): a request head the server cannot place")
            return
        }
        let planned = plan[index].requestFields(index: index)
        if crossing ? fields.filter({ $0.name == ":method" || $0.name == ":path" }) != [planned[0], planned[3]] : fields != planned { violations.append("stream \(id): request fields \(fields)") }
        // Over a socket an empty body may also end with the head (the transport sends no DATA).
        let mustEnd = plan[index].upload == nil
        let mayEnd = mustEnd || crossing && plan[index].upload == []
        if mustEnd && !endStream || endStream && !mayEnd { violations.append("stream \(id): END_STREAM \(endStream) on the request head") }
        streams[id] = Stream(request: index, requestEnded: endStream, receiveWindow: ackedInitialWindow, sendWindow: clientInitialWindow)
    }

    /// The plan index a request head names in its `:path` (`/r<index>`).
    private static func requestIndex(_ fields: [HPACKHeaderField]) -> Int? {
        fields.first { $0.name == ":path" }.flatMap { Int($0.value.dropFirst(2)) }
    }

    /// Request body octets: within both windows the client was given, on an open request.
    private mutating func received(_ id: UInt32, _ data: [UInt8], length: Int, endStream: Bool) {
        // A DATA frame of no octets needs no window, even a negative one (§6.9.1).
        if length > 0, length > receiveConnectionWindow {
            violations.append("stream \(id): DATA of \(length) exceeds the connection window \(receiveConnectionWindow)")
        }
        receiveConnectionWindow -= length
        guard var stream = streams[id], !stream.requestEnded else {
            if endedByPeer(id) { return }
            violations.append("the client wrote DATA on stream \(id), whose request is not open")
            return
        }
        if length > 0, length > stream.receiveWindow {
            violations.append("stream \(id): DATA of \(length) exceeds the stream window \(stream.receiveWindow)")
        }
        stream.receiveWindow -= length
        stream.upload += data
        if endStream {
            stream.requestEnded = true
            if stream.upload != plan[stream.request].upload {
                violations.append("stream \(id): the server received an upload of \(stream.upload.count) octets, not the \(plan[stream.request].upload?.count ?? 0) sent")
            }
        }
        streams[id] = stream
    }

    /// Adds a frame to the trace (which keeps the last 40).
    mutating func note(_ side: String, _ frame: HTTP2Frame) {
        let text = switch frame {
        case .data(let id, let data, let end, let padding): "DATA \(id) \(data.count)\(padding.map { " pad \($0)" } ?? "")\(end ? " END_STREAM" : "")"
        case .headers(let id, _, let end, let endHeaders, _, _): "HEADERS \(id)\(end ? " END_STREAM" : "")\(endHeaders ? "" : " (CONTINUATION follows)")"
        case .continuation(let id, _, _): "CONTINUATION \(id)"
        default: "\(frame)"
        }
        trace.append("\(side): \(text)")
        if trace.count > 40 { trace.removeFirst() }
    }

    /// Notes each frame of the octets the peer sends, for the trace.
    mutating func noteSent(_ bytes: [UInt8]) {
        var reader = HTTP2FrameParser(role: .client, maxFrameSize: 1 << 24 - 1)
        reader.append(HTTP2Frame.settings([]).serialized + bytes)
        _ = try? reader.nextFrame()
        while let frame = try? reader.nextFrame() { note("server", frame) }
    }

    // MARK: - The peer's moves

    /// The server's first frames: its SETTINGS and the acknowledgement of the client's.
    mutating func opening(_ settings: [HTTP2Setting]) -> [UInt8] {
        self.settings(settings) + acknowledgeSettings()
    }

    /// SETTINGS, to be applied once the client acknowledges them.
    mutating func settings(_ settings: [HTTP2Setting]) -> [UInt8] {
        unackedSettings.append(settings)
        return HTTP2Frame.settings(settings).serialized
    }

    /// SETTINGS ACK for every SETTINGS frame of the client read so far.
    mutating func acknowledgeSettings() -> [UInt8] {
        defer { clientSettingsToAck = 0 }
        return (0..<clientSettingsToAck).flatMap { _ in HTTP2Frame.settingsAck.serialized }
    }

    /// A PING the client must acknowledge with the same opaque data.
    mutating func ping(_ opaque: UInt64) -> [UInt8] {
        pendingPings.append(opaque)
        return HTTP2Frame.ping(opaque: opaque, ack: false).serialized
    }

    /// WINDOW_UPDATE giving the client `increment` more octets on a stream, or the connection.
    mutating func windowUpdate(_ id: UInt32, _ increment: Int) -> [UInt8] {
        if id == 0 { receiveConnectionWindow += increment } else { streams[id]?.receiveWindow += increment }
        return HTTP2Frame.windowUpdate(streamID: id, increment: UInt32(increment)).serialized
    }

    /// RST_STREAM from the server; the stream is gone.
    mutating func reset(_ id: UInt32, _ code: HTTP2ErrorCode) -> [UInt8] {
        if code == .refusedStream, let request = streams[id]?.request { unprocessed.append(request) }
        streams[id] = nil
        peerResets.insert(id)
        return HTTP2Frame.rstStream(streamID: id, code: code).serialized
    }

    /// GOAWAY: the streams above `last` are dropped unprocessed.
    mutating func goAway(last: UInt32, code: HTTP2ErrorCode) -> [UInt8] {
        goAwayLast = last
        for id in streams.keys.sorted() where id > last {
            unprocessed.append(streams[id]!.request)
            streams[id] = nil
        }
        return HTTP2Frame.goAway(lastStreamID: last, code: code, debugData: []).serialized
    }

    /// The peer reads the RST_STREAM(CANCEL)s in flight: no more frames on those streams.
    mutating func noticeCancels() {
        cancelledInFlight.removeAll()
    }

    /// The next piece of the response on stream `id` (or on a stream cancelled in flight), as
    /// the windows the client gave allow, split at random: a 103, the head (HEADERS with
    /// CONTINUATION), DATA (with padding, sometimes empty), the trailers or an empty DATA with
    /// END_STREAM. `nil` when nothing may go now. `ended` tells that the frames end the stream.
    mutating func respond(_ id: UInt32, using random: inout SeededRandom) -> (bytes: [UInt8], ended: Bool)? {
        let inFlight = streams[id] == nil
        guard var stream = streams[id] ?? cancelledInFlight[id], !stream.responseEnded else { return nil }
        let request = plan[stream.request]
        var output: [UInt8] = []
        let bodyDone = { (stream: Stream) in stream.bodySent == request.body.count }
        if request.interim && !stream.interimSent {
            stream.interimSent = true
            fieldBlock(id, [HPACKHeaderField(name: ":status", value: "103"), HPACKHeaderField(name: "link", value: "</s>")],
                       endStream: false, using: &random, into: &output)
        } else if !stream.headSent {
            stream.headSent = true
            let end = stream.requestEnded && request.body.isEmpty && request.trailers.isEmpty
            fieldBlock(id, [HPACKHeaderField(name: ":status", value: String(request.status))] + request.fields,
                       endStream: end, using: &random, into: &output)
            stream.responseEnded = end
        } else if !bodyDone(stream) {
            let padding: UInt8? = paddingHeavy ? UInt8.random(in: 200...255, using: &random)
                : Int.random(in: 0..<4, using: &random) == 0 ? UInt8.random(in: 0...255, using: &random) : nil
            let overhead = padding.map { Int($0) + 1 } ?? 0
            let room = Swift.min(stream.sendWindow, sendConnectionWindow) - overhead
            let frame = paddingHeavy ? overhead + Int.random(in: 1...100, using: &random)
                : [1, 100, 5_000, 16_384, 16_384, 16_384, 16_384, 16_384].randomElement(using: &random)!
            let size = Swift.min(request.body.count - stream.bodySent, room, frame - overhead)
            guard size > 0 else { return nil }
            let end = stream.requestEnded && stream.bodySent + size == request.body.count && request.trailers.isEmpty
            HTTP2Frame.data(streamID: id, data: Array(request.body[stream.bodySent..<(stream.bodySent + size)]),
                            endStream: end, padding: padding).serialize(into: &output)
            stream.bodySent += size
            stream.sendWindow -= size + overhead
            sendConnectionWindow -= size + overhead
            stream.responseEnded = end
        } else {
            // The body is out; the response ends once the request has (this peer reads it all).
            guard stream.requestEnded else { return nil }
            if request.trailers.isEmpty {
                HTTP2Frame.data(streamID: id, data: [], endStream: true).serialize(into: &output)
            } else {
                fieldBlock(id, request.trailers, endStream: true, using: &random, into: &output)
            }
            stream.responseEnded = true
        }
        if inFlight {
            cancelledInFlight[id] = stream.responseEnded ? nil : stream
        } else {
            streams[id] = stream.responseEnded && stream.requestEnded ? nil : stream
        }
        return (output, stream.responseEnded)
    }

    /// A field block as HEADERS (sometimes padded) and CONTINUATION frames cut at random.
    private mutating func fieldBlock(_ id: UInt32, _ fields: [HPACKHeaderField], endStream: Bool,
                                     using random: inout SeededRandom, into output: inout [UInt8]) {
        var block: [UInt8] = []
        encoder.encode(fields, into: &block)
        let pieces = Bool.random(using: &random) ? 1 : Int.random(in: 2...4, using: &random)
        var cuts = (1..<pieces).map { _ in Int.random(in: 0...block.count, using: &random) }.sorted()
        cuts.append(block.count)
        var start = 0
        for (index, end) in cuts.enumerated() {
            let piece = Array(block[start..<end])
            let last = index == cuts.count - 1
            let frame: HTTP2Frame = index == 0
                ? .headers(streamID: id, fieldBlock: piece, endStream: endStream, endHeaders: last,
                           padding: Bool.random(using: &random) ? UInt8.random(in: 0...20, using: &random) : nil)
                : .continuation(streamID: id, fieldBlock: piece, endHeaders: last)
            frame.serialize(into: &output)
            start = end
        }
    }
}
