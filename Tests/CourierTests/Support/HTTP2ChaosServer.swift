import CourierHTTP2
import CourierTestServer
import Foundation

/// A script for ``HTTP2ScriptedPeer`` that treats each request at random, on its first
/// ``faultyConnections`` connections: it answers, refuses (`REFUSED_STREAM`, at most once per
/// request), resets (`INTERNAL_ERROR`), sends GOAWAY below the request (once per connection, then
/// answers the streams at or below the last stream id and ignores those above), drops the
/// connection, or cuts a response in the middle of its body. Later connections answer every
/// request. `GET /echo` is always answered. It gives request bodies their windows back as they
/// arrive.
///
/// Every connection's thread writes what it did to each request's path into one log, which a
/// test compares with what the client saw. The seed fixes each connection's choices, request by
/// request; which request reaches which connection, and when, is the network's.
final class HTTP2ChaosServer: Sendable {
    /// What the server did with a request, as the client must account for it.
    enum Treatment: Sendable, Equatable {
        /// A whole 200 response, with ``answer(path:body:)`` as its body.
        case answered
        /// Refused unprocessed: `REFUSED_STREAM`, or above the last stream id of a GOAWAY.
        case refused
        /// Reset with `INTERNAL_ERROR`.
        case reset
        /// On a connection the server dropped, or cut in the middle of its body.
        case lost

        /// Whether the request may fail because of it: a refusal must lead to a retry.
        var mayFail: Bool { self == .reset || self == .lost }
    }

    let seed: UInt64
    /// How many of the first connections misbehave.
    let faultyConnections: Int
    private let log = Locked<[String: [Treatment]]>([:])

    init(seed: UInt64, faultyConnections: Int = 2) {
        self.seed = seed
        self.faultyConnections = faultyConnections
    }

    /// The body the server answers a request with: its path, and for a request with a body,
    /// that body's length and the sum of its octets.
    static func answer(path: String, body: [UInt8]) -> String {
        body.isEmpty ? path : "\(path) \(body.count) \(body.reduce(0) { $0 &+ Int($1) })"
    }

    /// What the server did with the request for `path`, in order.
    func treatments(of path: String) -> [Treatment] { log.withLock { $0[path] ?? [] } }

    /// The script to run on each connection.
    var script: HTTP2ScriptedPeer.Script {
        { [self] index, connection in try serve(index, connection) }
    }

    private func record(_ path: String, _ treatment: Treatment) {
        log.withLock { $0[path, default: []].append(treatment) }
    }

    private func serve(_ index: Int, _ connection: HTTP2PeerConnection) throws {
        var random = SeededRandom(seed: seed, stream: index)
        let limits: [[HTTP2Setting]] = [[], [HTTP2Setting(.maxConcurrentStreams, 1)], [HTTP2Setting(.maxConcurrentStreams, 3)]]
        let faulty = index < faultyConnections
        try connection.start(settings: faulty ? limits[Int(random.next() % 3)] : [])
        var paths: [String] = []
        var lastStreamID: UInt32?
        while let request = try connection.nextRequest() {
            try connection.absorbPending()
            let path = request.path
            paths.append(path)
            if let lastStreamID, request.streamID > lastStreamID {
                record(path, .refused)  // the client sent it before it read the GOAWAY
                continue
            }
            let roll = faulty && path != "/echo" ? random.next() % 20 : 0
            if (roll == 12 || roll == 13), !treatments(of: path).contains(.refused) {
                connection.send(.rstStream(streamID: request.streamID, code: .refusedStream))
                record(path, .refused)
            } else if roll == 14 {
                connection.send(.rstStream(streamID: request.streamID, code: .internalError))
                record(path, .reset)
            } else if roll == 15 || roll == 16, lastStreamID == nil, request.streamID > 1 {
                lastStreamID = request.streamID - 2
                connection.send(.goAway(lastStreamID: request.streamID - 2, code: .noError, debugData: []))
                record(path, .refused)
            } else if roll == 17 || roll == 18 {
                // Dropped, or cut after two octets of the body: whatever was on the connection may be lost.
                if roll == 18 { connection.respond(request.streamID, body: Array(path.utf8.prefix(2)), end: false) }
                for path in paths { record(path, .lost) }
                connection.close()
                return
            } else {
                connection.respond(request.streamID, body: Array(Self.answer(path: path, body: request.body).utf8))
                record(path, .answered)
            }
        }
    }
}
