@testable import CourierHTTP2
import CourierTestServer
import Testing

@Suite("HTTP/2 connection state machine, exactly one outcome per stream")
struct HTTP2ConnectionExactlyOnceTests {
    /// One random server move, built by the test's own HPACK encoder so that field blocks stay
    /// decodable unless the move is meant to be garbage.
    static func randomMove(_ peer: inout HTTP2ConnectionTestPeer, streams: [UInt32], random: inout SeededRandom) -> [UInt8] {
        let id = streams.randomElement(using: &random) ?? 1
        switch Int.random(in: 0..<100, using: &random) {
        case 0..<25:
            let status = ["200", "204", "103", "404", "x"].randomElement(using: &random)!
            return peer.headers(id, [field(":status", status), field("x-n", String(Int.random(in: 0..<5, using: &random)))],
                                endStream: Bool.random(using: &random))
        case 25..<45:
            return HTTP2Frame.data(streamID: id, data: [UInt8](repeating: 1, count: Int.random(in: 0..<3000, using: &random)),
                                   endStream: Bool.random(using: &random)).serialized
        case 45..<55:
            return peer.headers(id, [field("x-trailer", "1")], endStream: true)
        case 55..<65:
            return HTTP2Frame.rstStream(streamID: id, code: [.refusedStream, .cancel, .internalError, .noError].randomElement(using: &random)!).serialized
        case 65..<72:
            return HTTP2Frame.windowUpdate(streamID: Bool.random(using: &random) ? 0 : id, increment: UInt32.random(in: 1...100_000, using: &random)).serialized
        case 72..<80:
            return HTTP2Frame.ping(opaque: random.next(), ack: Bool.random(using: &random)).serialized
        case 80..<84:
            return HTTP2Frame.goAway(lastStreamID: id, code: .noError, debugData: []).serialized
        case 84..<88:
            return HTTP2Frame.settings([HTTP2Setting(.initialWindowSize, UInt32.random(in: 0...200_000, using: &random)),
                                        HTTP2Setting(.maxConcurrentStreams, UInt32.random(in: 0...10, using: &random))]).serialized
        case 88..<92:
            // Garbage: a random frame type, flags and payload.
            return rawFrame(type: UInt8.random(in: 0...12, using: &random), flags: UInt8.random(in: 0...255, using: &random),
                            streamID: UInt32.random(in: 0...12, using: &random),
                            payload: (0..<Int.random(in: 0...12, using: &random)).map { _ in UInt8.random(in: 0...255, using: &random) })
        default:
            return []
        }
    }

    @Test("2,000 random conversations: no stream ends twice, nothing follows the close, and a closed connection has ended every stream")
    func randomConversations() throws {
        var random = SeededRandom(seed: 9113_7541)
        var closedConversations = 0, endedStreams = 0, finishedStreams = 0
        for conversation in 0..<2_000 {
            var peer = try HTTP2ConnectionTestPeer()
            var opened: [UInt32] = []
            var ended: [UInt32: Int] = [:]
            var closes = 0
            for _ in 0..<Int.random(in: 1...30, using: &random) {
                if Int.random(in: 0..<4, using: &random) == 0, peer.machine.availableStreamCount > 0 {
                    let result = peer.machine.openStream(headers: [field(":method", "POST"), field(":path", "/")], endStream: false)
                    if let result {
                        opened.append(result.streamID)
                        _ = peer.machine.sendBody(streamID: result.streamID, [UInt8](repeating: 2, count: Int.random(in: 0...70_000, using: &random)),
                                                  endStream: true)
                    }
                    continue
                }
                if Int.random(in: 0..<10, using: &random) == 0, let id = opened.randomElement(using: &random) {
                    let actions = peer.machine.cancelStream(id)
                    if actions.contains(where: { if case .write = $0 { true } else { false } }) { ended[id, default: 0] += 1 }
                    closes += actions.filter { if case .closeConnection = $0 { true } else { false } }.count
                    continue
                }
                let move = Self.randomMove(&peer, streams: opened, random: &random)
                let actions = peer.machine.receive(move)
                if closes > 0 { #expect(actions.isEmpty, "conversation \(conversation): actions after the close") }
                for action in actions {
                    switch action {
                    case .streamFinished(let id), .streamFailed(let id, _):
                        ended[id, default: 0] += 1
                        if case .streamFinished = action { finishedStreams += 1 }
                        #expect(opened.contains(id), "conversation \(conversation): stream \(id) was never opened")
                    case .responseHead(let id, _, _), .responseData(let id, _), .responseTrailers(let id, _):
                        #expect(ended[id] == nil, "conversation \(conversation): stream \(id) got an event after it ended")
                    case .closeConnection:
                        closes += 1
                    case .write:
                        break
                    }
                }
            }
            #expect(ended.values.allSatisfy { $0 == 1 }, "conversation \(conversation): a stream ended twice: \(ended)")
            #expect(closes <= 1, "conversation \(conversation): closed \(closes) times")
            closedConversations += closes
            endedStreams += ended.count
            if closes == 1 {
                #expect(Set(ended.keys) == Set(opened), "conversation \(conversation): a stream never ended")
                #expect(peer.machine.openStreamCount == 0)
            } else {
                #expect(peer.machine.openStreamCount + ended.count == opened.count, "conversation \(conversation): streams lost")
            }
        }
        // The moves reach every outcome often enough for the checks above to mean something.
        #expect(closedConversations > 200)
        #expect(endedStreams > 1_000)
        #expect(finishedStreams > 100)
    }
}
