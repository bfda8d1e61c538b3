@testable import CourierHTTP2
import Testing

/// A scripted server for `HTTP2ConnectionStateMachine` tests: it reads what the client writes
/// (with a server-role frame parser and an HPACK decoder) and builds the server's frames.
struct HTTP2ConnectionTestPeer {
    var machine: HTTP2ConnectionStateMachine
    private var parser = HTTP2FrameParser(role: .server, maxFrameSize: 1 << 24 - 1)
    private var encoder = HPACKEncoder()
    var decoder = HPACKDecoder()

    /// Starts a client machine and has the server send its SETTINGS (and ACK the client's).
    init(configuration: HTTP2ConnectionStateMachine.Configuration = .init(), serverSettings: [HTTP2Setting] = []) throws {
        machine = HTTP2ConnectionStateMachine(configuration: configuration)
        let opening = try frames(machine.start())
        #expect(opening.first.map { if case .settings = $0 { true } else { false } } == true)
        let answer = try frames(machine.receive(HTTP2Frame.settings(serverSettings).serialized + HTTP2Frame.settingsAck.serialized))
        #expect(answer == [.settingsAck])
    }

    /// The frames in the `.write` actions (in order), parsed as the server would.
    mutating func frames(_ actions: [HTTP2ConnectionAction]) throws -> [HTTP2Frame] {
        for case .write(let bytes) in actions { parser.append(bytes) }
        var frames: [HTTP2Frame] = []
        while let frame = try parser.nextFrame() { frames.append(frame) }
        return frames
    }

    /// The actions other than `.write`.
    func events(_ actions: [HTTP2ConnectionAction]) -> [HTTP2ConnectionAction] {
        actions.filter { if case .write = $0 { false } else { true } }
    }

    /// A HEADERS frame (one frame, END_HEADERS) with fields encoded by the server's encoder.
    mutating func headers(_ streamID: UInt32, _ fields: [HPACKHeaderField], endStream: Bool = false) -> [UInt8] {
        var block: [UInt8] = []
        encoder.encode(fields, into: &block)
        return HTTP2Frame.headers(streamID: streamID, fieldBlock: block, endStream: endStream, endHeaders: true).serialized
    }

    /// A field block encoded by the server's encoder (to split by hand).
    mutating func fieldBlock(_ fields: [HPACKHeaderField]) -> [UInt8] {
        var block: [UInt8] = []
        encoder.encode(fields, into: &block)
        return block
    }

    /// Opens a GET stream and returns its id.
    mutating func get(_ path: String = "/", endStream: Bool = true) throws -> UInt32 {
        let fields = [field(":method", "GET"), field(":scheme", "https"), field(":authority", "example.com"), field(":path", path)]
        let result = machine.openStream(headers: fields, endStream: endStream)
        let opened = try #require(result)
        let sent = try frames(opened.actions)
        guard case .headers(let id, let block, let end, true, _, _) = sent.first, id == opened.streamID, end == endStream else {
            Issue.record("no HEADERS frame: \(sent)")
            return opened.streamID
        }
        #expect(try decoder.decode(block) == fields)
        return opened.streamID
    }
}
