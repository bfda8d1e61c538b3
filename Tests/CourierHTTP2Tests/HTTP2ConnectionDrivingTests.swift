@testable import CourierHTTP2
import Testing

/// The events a driver raises besides received octets, and the flood limits: back-pressure by
/// withholding WINDOW_UPDATE, the SETTINGS acknowledgement timeout, the transport closing, and
/// PING and SETTINGS floods.
@Suite("HTTP/2 connection state machine: driver events and flood limits")
struct HTTP2ConnectionDrivingTests {
    @Test("readiness: the peer's first SETTINGS is reported, with its stream limit (unlimited until set)")
    func peerSettings() throws {
        var machine = HTTP2ConnectionStateMachine()
        _ = machine.start()
        #expect(!machine.hasReceivedPeerSettings)
        #expect(machine.peerStreamLimit == Int.max)
        _ = machine.receive(HTTP2Frame.settings([HTTP2Setting(.maxConcurrentStreams, 7)]).serialized)
        #expect(machine.hasReceivedPeerSettings)
        #expect(machine.peerStreamLimit == 7)
        #expect(machine.awaitsSettingsAcknowledgement)
        _ = machine.receive(HTTP2Frame.settingsAck.serialized)
        #expect(!machine.awaitsSettingsAcknowledgement)
    }

    @Test("stream windows returned after delivery: a stream whose consumer fell behind while a read's DATA was delivered gives none of it back, its neighbour does")
    func windowsReturnedAfterDelivery() throws {
        var configuration = HTTP2ConnectionStateMachine.Configuration()
        configuration.initialWindowSize = 1000
        configuration.returnsStreamWindowsOnReceive = false
        var peer = try HTTP2ConnectionTestPeer(configuration: configuration)
        let behind = try peer.get("/behind")
        let reading = try peer.get("/reading")
        _ = peer.machine.receive(peer.headers(behind, [field(":status", "200")]))
        _ = peer.machine.receive(peer.headers(reading, [field(":status", "200")]))
        // One read brings each stream 600 octets, past half its window.
        let read = HTTP2Frame.data(streamID: behind, data: [UInt8](repeating: 1, count: 600), endStream: false).serialized
            + HTTP2Frame.data(streamID: reading, data: [UInt8](repeating: 2, count: 600), endStream: false).serialized
        let received = peer.machine.receive(read)
        #expect(try peer.frames(received).allSatisfy { if case .windowUpdate(let stream, _) = $0 { stream == 0 } else { true } },
                "no stream window goes back before the DATA is delivered")
        // Delivering it, the driver finds the first stream's consumer behind.
        peer.machine.pauseStream(behind)
        #expect(try peer.frames(peer.machine.returnStreamWindows()) == [.windowUpdate(streamID: reading, increment: 600)])
        #expect(peer.machine.returnStreamWindows().isEmpty, "nothing is given back twice")
        #expect(try peer.frames(peer.machine.resumeStream(behind)) == [.windowUpdate(streamID: behind, increment: 600)])
    }

    @Test("a paused stream withholds WINDOW_UPDATE; resuming gives back everything received since")
    func pauseAndResume() throws {
        var configuration = HTTP2ConnectionStateMachine.Configuration()
        configuration.initialWindowSize = 1000
        var peer = try HTTP2ConnectionTestPeer(configuration: configuration)
        let id = try peer.get()
        _ = peer.machine.receive(peer.headers(id, [field(":status", "200")]))
        peer.machine.pauseStream(id)
        let data = peer.machine.receive(HTTP2Frame.data(streamID: id, data: [UInt8](repeating: 1, count: 600), endStream: false).serialized)
        // No stream-level WINDOW_UPDATE while paused (the connection window is given back on its own).
        #expect(try peer.frames(data).allSatisfy { if case .windowUpdate(let stream, _) = $0 { stream == 0 } else { true } })
        #expect(peer.events(data) == [.responseData(streamID: id, [UInt8](repeating: 1, count: 600))])
        // The server may not send past the window: 400 more is allowed, 401 is not.
        #expect(try peer.frames(peer.machine.resumeStream(id)) == [.windowUpdate(streamID: id, increment: 600)])
        #expect(peer.machine.resumeStream(id).isEmpty, "resuming twice gives nothing back twice")
        let more = peer.machine.receive(HTTP2Frame.data(streamID: id, data: [UInt8](repeating: 2, count: 1000), endStream: true).serialized)
        #expect(peer.events(more).last == .streamFinished(streamID: id), "the reopened window takes a full 1000 octets")
    }

    @Test("a paused stream's window is enforced: the server overrunning it resets the stream")
    func pausedWindowEnforced() throws {
        var configuration = HTTP2ConnectionStateMachine.Configuration()
        configuration.initialWindowSize = 1000
        var peer = try HTTP2ConnectionTestPeer(configuration: configuration)
        let id = try peer.get()
        _ = peer.machine.receive(peer.headers(id, [field(":status", "200")]))
        peer.machine.pauseStream(id)
        _ = peer.machine.receive(HTTP2Frame.data(streamID: id, data: [UInt8](repeating: 1, count: 1000), endStream: false).serialized)
        let overrun = peer.machine.receive(HTTP2Frame.data(streamID: id, data: [1], endStream: false).serialized)
        #expect(try peer.frames(overrun).contains(.rstStream(streamID: id, code: .flowControlError)))
        #expect(peer.events(overrun).contains { if case .streamFailed(id, _) = $0 { true } else { false } })
    }

    @Test("SETTINGS not acknowledged in time: GOAWAY(SETTINGS_TIMEOUT), every stream fails, the connection closes")
    func settingsTimeout() throws {
        var machine = HTTP2ConnectionStateMachine()
        _ = machine.start()
        _ = machine.receive(HTTP2Frame.settings([]).serialized)
        let result = machine.openStream(headers: [HPACKHeaderField(name: ":method", value: "GET")], endStream: true)
        let opened = try #require(result)
        let actions = machine.settingsTimedOut()
        let error = HTTP2ProtocolError.connection(.settingsTimeout, "the server did not acknowledge SETTINGS in time")
        #expect(actions.dropFirst() == [.streamFailed(streamID: opened.streamID, HTTP2StreamFailure(code: .settingsTimeout, retryable: false, reason: error.reason)),
                                        .closeConnection(error: error)])
        guard case .write(let bytes) = actions.first else { Issue.record("no GOAWAY written"); return }
        #expect(HTTP2Frame.goAway(lastStreamID: 0, code: .settingsTimeout, debugData: []).serialized == bytes)
        #expect(machine.isClosed)
        #expect(machine.settingsTimedOut().isEmpty, "once")
    }

    @Test("SETTINGS acknowledged in time: the timeout does nothing")
    func settingsAcknowledged() throws {
        var peer = try HTTP2ConnectionTestPeer()
        #expect(peer.machine.settingsTimedOut().isEmpty)
        #expect(!peer.machine.isClosed)
    }

    @Test("the transport closing fails every open stream, not retryable, in stream order, once")
    func transportClosed() throws {
        var peer = try HTTP2ConnectionTestPeer()
        let first = try peer.get()
        let second = try peer.get()
        let failure = HTTP2StreamFailure(code: .internalError, retryable: false, reason: "gone")
        #expect(peer.machine.transportClosed(reason: "gone") == [.streamFailed(streamID: first, failure), .streamFailed(streamID: second, failure)])
        #expect(peer.machine.isClosed)
        #expect(peer.machine.transportClosed(reason: "gone").isEmpty)
        #expect(peer.machine.cancelStream(first).isEmpty)
    }

    @Test("a PING flood: more than the limit without HEADERS or DATA ends the connection with ENHANCE_YOUR_CALM")
    func pingFlood() throws {
        var configuration = HTTP2ConnectionStateMachine.Configuration()
        configuration.maxPingsWithoutData = 3
        var peer = try HTTP2ConnectionTestPeer(configuration: configuration)
        let id = try peer.get()
        var pings: [UInt8] = []
        for i in 0..<3 { HTTP2Frame.ping(opaque: UInt64(i), ack: false).serialize(into: &pings) }
        #expect(try peer.frames(peer.machine.receive(pings)).count == 3, "three PINGs are answered")
        // A HEADERS frame resets the count.
        _ = peer.machine.receive(peer.headers(id, [field(":status", "200")]))
        #expect(try peer.frames(peer.machine.receive(pings)).count == 3)
        let flood = peer.machine.receive(HTTP2Frame.ping(opaque: 9, ack: false).serialized)
        let error = HTTP2ProtocolError.connection(.enhanceYourCalm, "a PING flood: more than 3 PING frames without HEADERS or DATA")
        #expect(peer.events(flood).last == .closeConnection(error: error))
        #expect(try peer.frames(flood).last == .goAway(lastStreamID: 0, code: .enhanceYourCalm, debugData: []))
        // PING acknowledgements from the server never count.
        var acks = try HTTP2ConnectionTestPeer(configuration: configuration)
        var pongs: [UInt8] = []
        for i in 0..<10 { HTTP2Frame.ping(opaque: UInt64(i), ack: true).serialize(into: &pongs) }
        #expect(acks.machine.receive(pongs).isEmpty)
    }

    @Test("a SETTINGS flood: more than the limit without HEADERS or DATA ends the connection with ENHANCE_YOUR_CALM")
    func settingsFlood() throws {
        var configuration = HTTP2ConnectionStateMachine.Configuration()
        configuration.maxSettingsWithoutData = 4
        // The test peer's opening SETTINGS is the first.
        var peer = try HTTP2ConnectionTestPeer(configuration: configuration)
        var frames: [UInt8] = []
        for _ in 0..<3 { HTTP2Frame.settings([]).serialize(into: &frames) }
        #expect(try peer.frames(peer.machine.receive(frames)) == [.settingsAck, .settingsAck, .settingsAck])
        let flood = peer.machine.receive(HTTP2Frame.settings([]).serialized)
        #expect(peer.events(flood) == [.closeConnection(error: .connection(
            .enhanceYourCalm, "a SETTINGS flood: more than 4 SETTINGS frames without HEADERS or DATA"))])
    }
}
