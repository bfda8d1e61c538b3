import CourierHTTP2
import CourierTestServer
import Foundation

/// A script for ``HTTP2ScriptedPeer`` that serves ``StreamingChaos`` downloads on many streams of
/// one connection at once and keeps to the client's flow-control windows, so that a test sees
/// what backpressure let it send: the octets it sent on each stream, whether it is waiting for the
/// stream's window, and the RST_STREAM the client sent. A body's fault applies the first time its
/// path is asked for; a later request for it gets the whole body. Other paths get their path.
final class StreamingChaosPeer: Sendable {
    /// What the peer knows of one path's latest stream.
    struct Log: Sendable {
        var visits = 0
        /// Body octets sent on the stream.
        var sent = 0
        /// Octets are left to send, but the stream's window is used up.
        var waitingForWindow = false
        /// The stream is over for the peer: its end, its fault, or the client's RST_STREAM.
        var ended = false
        /// The connection was dropped while the stream was open.
        var lost = false
        /// The code of the client's RST_STREAM.
        var clientReset: HTTP2ErrorCode?
    }

    private let downloads: [String: StreamingChaos.Download]
    private let logs = Locked<[String: Log]>([:])

    init(_ downloads: [StreamingChaos.Download]) {
        self.downloads = Dictionary(uniqueKeysWithValues: downloads.map { ($0.path, $0) })
    }

    /// What the peer did with `path`'s latest stream.
    func log(_ path: String) -> Log { logs.withLock { $0[path] ?? Log() } }

    /// The script to run on each connection.
    var script: HTTP2ScriptedPeer.Script { { [self] _, connection in try serve(connection) } }

    /// A stream the peer is sending a body on.
    private struct Outgoing {
        let path: String
        let download: StreamingChaos.Download
        let fault: StreamingChaos.ServerFault
        var sent = 0
        var window: Int
        var limit: Int { fault.available(download.size) }
    }

    private func update(_ path: String, _ change: (inout Log) -> Void) {
        logs.withLock { change(&$0[path, default: Log()]) }
    }

    private func serve(_ connection: HTTP2PeerConnection) throws {
        guard case .frame(.settings(let settings)) = try connection.nextFrame(waitingAtMost: 10_000) else { return }
        var initialWindow = Int(settings.last { $0.identifier == .initialWindowSize }?.value ?? 65_535)
        connection.send(.settings([]), .settingsAck)
        var connectionWindow = 65_535
        var streams: [UInt32: Outgoing] = [:]
        while true {
            let ready = streams.values.contains { $0.sent < $0.limit && $0.window > 0 } && connectionWindow > 0
            switch try connection.nextFrame(waitingAtMost: ready ? 0 : 10_000) {
            case .closed:
                return
            case .nothing where !ready:
                return
            case .nothing:
                break
            case .frame(let frame):
                switch frame {
                case .headers(let id, let block, _, _, _, _):
                    let path = connection.decodeFields(block).first { $0.name == ":path" }?.value ?? ""
                    if let stream = start(id, path, window: initialWindow, connection) { streams[id] = stream }
                case .windowUpdate(0, let increment):
                    connectionWindow += Int(increment)
                case .windowUpdate(let id, let increment):
                    streams[id]?.window += Int(increment)
                case .settings(let changed):
                    if let value = changed.last(where: { $0.identifier == .initialWindowSize })?.value {
                        for id in streams.keys { streams[id]!.window += Int(value) - initialWindow }
                        initialWindow = Int(value)
                    }
                    connection.send(.settingsAck)
                case .rstStream(let id, let code):
                    if let stream = streams.removeValue(forKey: id) {
                        update(stream.path) { $0.clientReset = code; $0.ended = true; $0.waitingForWindow = false }
                    }
                case .ping(let opaque, false):
                    connection.send(.ping(opaque: opaque, ack: true))
                case .goAway:
                    return
                default:
                    break
                }
                continue  // take in everything that arrived before sending more
            }
            for id in streams.keys.sorted() {
                guard var stream = streams[id] else { continue }
                let count = min(16_384, stream.limit - stream.sent, stream.window, connectionWindow)
                if count > 0 {
                    let end = stream.fault == .none && stream.sent + count == stream.download.size
                    connection.send(.data(streamID: id, data: Array(StreamingChaos.bytes(stream.download.index, stream.sent..<(stream.sent + count))), endStream: end))
                    stream.sent += count
                    stream.window -= count
                    connectionWindow -= count
                }
                let sent = stream.sent
                update(stream.path) { $0.sent = sent; $0.waitingForWindow = sent < stream.limit && stream.window <= 0 }
                streams[id] = stream
                guard stream.sent == stream.limit else { continue }
                switch stream.fault {
                case .none:
                    streams[id] = nil
                    update(stream.path) { $0.ended = true }
                case .cut:
                    streams[id] = nil
                    connection.send(.rstStream(streamID: id, code: .internalError))
                    update(stream.path) { $0.ended = true }
                case .drop:
                    for open in streams.values { update(open.path) { $0.lost = true; $0.ended = true } }
                    connection.close()
                    return
                case .stall:
                    break
                }
            }
        }
    }

    /// Answers the HEADERS of stream `id` for `path`: the head, and the stream to send a body on.
    private func start(_ id: UInt32, _ path: String, window: Int, _ connection: HTTP2PeerConnection) -> Outgoing? {
        guard let download = downloads[path] else {
            connection.respond(id, body: Array(path.utf8))
            return nil
        }
        let visits = logs.withLock { logs -> Int in
            logs[path] = Log(visits: (logs[path]?.visits ?? 0) + 1)
            return logs[path]!.visits
        }
        let fault = visits == 1 ? download.fault : .none
        let empty = download.size == 0
        connection.respond(id, headers: [("content-length", "\(download.size)")], end: empty)
        if empty {
            update(path) { $0.ended = true }
            return nil
        }
        return Outgoing(path: path, download: download, fault: fault, window: window)
    }
}
