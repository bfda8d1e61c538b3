import CourierHTTP2
import CourierTestServer
import Foundation

/// A script for ``HTTP2ScriptedPeer`` that takes ``UploadChaos`` uploads on many streams of a
/// connection at once. The first time it sees a path it applies the upload's fault (see
/// ``UploadChaos/Fault``): it stores the body and answers its digest, gives the stream's window
/// back slowly, answers early (then RST_STREAM(NO_ERROR), or goes on taking DATA), resets the
/// stream, drops the connection, stops giving window and never answers, refuses the stream, or
/// sends GOAWAY below it (once per connection; every stream above the last id is then refused).
/// Later visits are stored. A stream with `expect: 100-continue` gets a `100` first. It always
/// gives the connection's window back, so that a held stream holds back no other.
///
/// It logs every visit (``Visit``) for the test to compare with what the client saw.
final class UploadChaosHTTP2Peer: Sendable {
    /// What the peer did with a stream.
    enum Treatment: Sendable, Equatable {
        /// Still open (the client reset it, or the test ended first).
        case open
        /// Answered with this body: the digest, or an early answer.
        case answered(String)
        /// RST_STREAM(INTERNAL_ERROR).
        case reset
        /// REFUSED_STREAM, or above the last stream id of a GOAWAY: not processed.
        case refused
        /// Open on a connection the peer dropped.
        case lost
        /// Neither read on nor answered: the client's timeout must end it.
        case stalled
    }

    /// One stream the peer saw for a path.
    struct Visit: Sendable, CustomStringConvertible {
        let connection: Int
        let streamID: UInt32
        let fault: UploadChaos.Fault
        var received = 0
        var treatment = Treatment.open
        /// The client reset the stream, with this code.
        var clientReset: HTTP2ErrorCode?
        /// The most octets the body source had yielded beyond what arrived, while the peer held back.
        var ahead = 0

        var description: String {
            "\(connection)/\(streamID) \(fault): got \(received), \(treatment)\(clientReset.map { ", client RST_STREAM \($0)" } ?? "")"
        }
    }

    private let uploads: [String: UploadChaos.Upload]
    private let seed: UInt64
    private let visits = Locked<[String: [Visit]]>([:])

    init(_ uploads: [UploadChaos.Upload], seed: UInt64) {
        self.uploads = Dictionary(uniqueKeysWithValues: uploads.map { ($0.path, $0) })
        self.seed = seed
    }

    /// Every visit of `path`, in order.
    func visits(_ path: String) -> [Visit] { visits.withLock { $0[path] ?? [] } }

    /// The script to run on each connection.
    var script: HTTP2ScriptedPeer.Script { { [self] index, connection in try serve(index, connection) } }

    /// A stream being received.
    private struct Incoming {
        let path: String
        let visit: Int
        let fault: UploadChaos.Fault
        var body = Data()
        /// Stream window owed to a slow stream, given back in small steps.
        var owed = 0
        var paused = false
        /// The slow stream held still once already, or the stalled one was measured.
        var held = false
    }

    private func update(_ path: String, _ visit: Int, _ change: (inout Visit) -> Void) {
        visits.withLock { change(&$0[path]![visit]) }
    }

    private func serve(_ index: Int, _ connection: HTTP2PeerConnection) throws {
        var random = SeededRandom(seed: seed, stream: index)
        let limits: [[HTTP2Setting]] = [[], [HTTP2Setting(.maxConcurrentStreams, 2)], [HTTP2Setting(.maxConcurrentStreams, 4)]]
        try connection.start(settings: limits[Int(random.next() % 3)])
        var streams: [UInt32: Incoming] = [:]
        var lastStreamID: UInt32?
        while true {
            let slow = streams.values.contains { $0.owed > 0 }
            switch try connection.nextFrame(waitingAtMost: slow ? 1 : 10_000) {
            case .closed:
                return
            case .nothing where !slow:
                return
            case .nothing:
                break
            case .frame(.headers(let id, let block, let endStream, _, _, _)):
                let fields = connection.decodeFields(block)
                let path = fields.first { $0.name == ":path" }?.value ?? ""
                guard let upload = uploads[path] else {
                    connection.respond(id, body: Array(path.utf8))
                    continue
                }
                let visit = visits.withLock { all -> Int in
                    let first = all[path] == nil
                    all[path, default: []].append(Visit(connection: index, streamID: id, fault: first ? upload.fault : .store))
                    return all[path]!.count - 1
                }
                if let lastStreamID, id > lastStreamID {
                    update(path, visit) { $0.treatment = .refused }  // sent before the client read the GOAWAY
                    continue
                }
                let fault = visit == 0 ? upload.fault : .store
                if fields.contains(where: { $0.name == "expect" && $0.value == "100-continue" }), fault.at != 0 {
                    connection.send(.headers(streamID: id, fieldBlock: connection.fieldBlock([(":status", "100")]), endStream: false, endHeaders: true))
                }
                streams[id] = Incoming(path: path, visit: visit, fault: fault)
                if try !advance(id, &streams, ended: endStream, connection, &lastStreamID) { return }
            case .frame(.data(let id, let data, let endStream, _)):
                if !data.isEmpty { connection.send(.windowUpdate(streamID: 0, increment: UInt32(data.count))) }
                guard streams[id] != nil else { continue }
                streams[id]!.body.append(contentsOf: data)
                if case .slowRead = streams[id]!.fault {
                    streams[id]!.owed += data.count
                } else if case .stall(let at) = streams[id]!.fault, streams[id]!.body.count >= at {
                    // Stalled: the window it has is all the client may send.
                } else if !data.isEmpty, !endStream {
                    connection.send(.windowUpdate(streamID: id, increment: UInt32(data.count)))
                }
                if try !advance(id, &streams, ended: endStream, connection, &lastStreamID) { return }
            case .frame(.rstStream(let id, let code)):
                if let stream = streams.removeValue(forKey: id) {
                    update(stream.path, stream.visit) { $0.clientReset = code }
                }
            case .frame(.settings):
                connection.send(.settingsAck)
            case .frame(.ping(let opaque, false)):
                connection.send(.ping(opaque: opaque, ack: true))
            case .frame(.goAway):
                return
            case .frame:
                break
            }
            // A slow stream gets its window back 16 KiB at a time.
            for id in streams.keys.sorted() where streams[id]!.owed > 0 && !streams[id]!.paused {
                let step = min(streams[id]!.owed, 16 << 10)
                streams[id]!.owed -= step
                connection.send(.windowUpdate(streamID: id, increment: UInt32(step)))
            }
        }
    }

    /// Applies the stream's fault to what arrived; `false` when the peer dropped the connection.
    private func advance(_ id: UInt32, _ streams: inout [UInt32: Incoming], ended: Bool, _ connection: HTTP2PeerConnection,
                         _ lastStreamID: inout UInt32?) throws -> Bool {
        guard let stream = streams[id] else { return true }
        let received = stream.body.count
        update(stream.path, stream.visit) { $0.received = received }
        let upload = uploads[stream.path]!
        let struck = stream.fault.at.map { received >= $0 || ended } ?? false
        switch stream.fault {
        case .store, .slowRead:
            if case .slowRead(let at) = stream.fault, received >= at, !stream.held {
                streams[id]!.held = true
                // Hold still a while: the client may not read its body source far past the window.
                streams[id]!.paused = true
                upload.log.settle()
                let ahead = upload.log.yielded - received
                update(stream.path, stream.visit) { $0.ahead = ahead }
                streams[id]!.paused = false
            }
            guard ended else { return true }
            let answer = UploadChaos.Upload.answer(path: stream.path, body: stream.body)
            streams[id] = nil
            connection.respond(id, body: Array(answer.utf8))
            update(stream.path, stream.visit) { $0.treatment = .answered(answer) }
        case .early(let status, _, let closes) where struck:
            streams[id] = nil
            connection.respond(id, status: status, body: Array(upload.earlyAnswer.utf8))
            if closes, !ended { connection.send(.rstStream(streamID: id, code: .noError)) }
            update(stream.path, stream.visit) { $0.treatment = .answered(upload.earlyAnswer) }
        case .cut where struck:
            streams[id] = nil
            connection.send(.rstStream(streamID: id, code: .internalError))
            update(stream.path, stream.visit) { $0.treatment = .reset }
        case .drop where struck:
            for open in streams.values { update(open.path, open.visit) { $0.treatment = .lost } }
            connection.close()
            return false
        case .stall where struck && !stream.held:
            streams[id]!.held = true
            update(stream.path, stream.visit) { $0.treatment = .stalled }
            if !ended {
                // The window the client still has is all it sends: wait until it stops, then measure
                // (what is still in the socket is within the stream's window).
                upload.log.settle()
                let ahead = upload.log.yielded - received
                update(stream.path, stream.visit) { $0.ahead = ahead }
            }
        case .refuse where struck:
            streams[id] = nil
            connection.send(.rstStream(streamID: id, code: .refusedStream))
            update(stream.path, stream.visit) { $0.treatment = .refused }
        case .goAway where struck:
            guard lastStreamID == nil, id > 1 else {
                // Once per connection, and never below stream 1: stored instead.
                streams[id] = Incoming(path: stream.path, visit: stream.visit, fault: .store, body: stream.body)
                return try advance(id, &streams, ended: ended, connection, &lastStreamID)
            }
            lastStreamID = id - 2
            connection.send(.goAway(lastStreamID: id - 2, code: .noError, debugData: []))
            for (other, open) in streams where other > id - 2 {
                streams[other] = nil
                update(open.path, open.visit) { $0.treatment = .refused }
            }
        default:
            break
        }
        return true
    }
}
