extension HTTP2ConnectionStateMachine {
    /// The largest flow-control window (§6.9.1).
    static let maxWindow = 0x7fff_ffff

    /// Handles one parsed frame. Throws a stream error (the stream is reset) or a connection
    /// error (the connection is failed); both are handled by `receive(_:)`.
    mutating func handle(_ frame: HTTP2Frame, output: inout [UInt8], actions: inout [HTTP2ConnectionAction]) throws(HTTP2ProtocolError) {
        switch frame {
        case .settings(let settings):
            settingsWithoutData += 1
            if settingsWithoutData > configuration.maxSettingsWithoutData {
                throw .connection(.enhanceYourCalm,
                                  "a SETTINGS flood: more than \(configuration.maxSettingsWithoutData) SETTINGS frames without HEADERS or DATA")
            }
            hasReceivedPeerSettings = true
            try applyPeerSettings(settings)
            // The ACK goes first (§6.5.3: emitted as soon as the values are applied): a peer
            // applies its new SETTINGS_INITIAL_WINDOW_SIZE to what it receives only once it
            // reads the ACK, so DATA the new window released must follow the ACK.
            HTTP2Frame.settingsAck.serialize(into: &output)
            for id in streams.keys.sorted() { flush(id, into: &output) }
        case .settingsAck:
            guard unacknowledgedSettings > 0 else { throw .connection(.protocolError, "a SETTINGS acknowledgement came without SETTINGS") }
            unacknowledgedSettings -= 1
            parser.maxFrameSize = configuration.maxFrameSize
        case .ping(let opaque, let ack):
            guard !ack else { return }
            pingsWithoutData += 1
            if pingsWithoutData > configuration.maxPingsWithoutData {
                throw .connection(.enhanceYourCalm,
                                  "a PING flood: more than \(configuration.maxPingsWithoutData) PING frames without HEADERS or DATA")
            }
            HTTP2Frame.ping(opaque: opaque, ack: true).serialize(into: &output)
        case .goAway(let lastStreamID, let code, _):
            receivedGoAway = true
            for id in streams.keys.sorted() where id > lastStreamID {
                streams[id] = nil
                actions.append(.streamFailed(streamID: id, HTTP2StreamFailure(
                    code: code, retryable: true, reason: "the server's GOAWAY says it did not process the stream")))
            }
        case .windowUpdate(let streamID, let increment):
            try windowUpdate(streamID, Int(increment), output: &output)
        case .rstStream(let streamID, let code):
            try checkNotIdle(streamID, "an RST_STREAM")
            if streams.removeValue(forKey: streamID) != nil {
                actions.append(.streamFailed(streamID: streamID, HTTP2StreamFailure(
                    code: code, retryable: code == .refusedStream, reason: HTTP2StreamFailure.serverReset)))
            }
        case .priority:
            return
        case .headers(let streamID, let block, let endStream, let endHeaders, _, _):
            pingsWithoutData = 0
            settingsWithoutData = 0
            guard streamID & 1 == 1 else { throw .connection(.protocolError, "HEADERS on a stream the server may not open") }
            try checkNotIdle(streamID, "HEADERS")
            if endHeaders {
                try fieldBlockComplete(streamID, endStream: endStream, block, output: &output, actions: &actions)
            } else {
                pendingFieldBlock = (streamID, endStream, block)
            }
        case .continuation(let streamID, let block, let endHeaders):
            guard var pending = pendingFieldBlock, pending.streamID == streamID else {
                throw .connection(.protocolError, "a CONTINUATION frame follows no open field block")
            }
            pending.bytes += block
            pendingFieldBlock = pending
            if endHeaders {
                try fieldBlockComplete(streamID, endStream: pending.endStream, pending.bytes, output: &output, actions: &actions)
            }
        case .data(let streamID, let data, let endStream, _):
            pingsWithoutData = 0
            settingsWithoutData = 0
            try receiveData(streamID, data, length: frame.flowControlledLength, endStream: endStream, output: &output, actions: &actions)
        case .pushPromise:
            throw .connection(.protocolError, "a PUSH_PROMISE arrived, but push is disabled")
        }
    }

    /// A frame on a stream id this client never opened is a connection error (§5.1): one at or
    /// above the next id to open, or an even one.
    private func checkNotIdle(_ streamID: UInt32, _ what: String) throws(HTTP2ProtocolError) {
        if neverOpened(streamID) {
            throw .connection(.protocolError, "\(what) frame is on a stream that was never opened")
        }
    }

    private mutating func applyPeerSettings(_ settings: [HTTP2Setting]) throws(HTTP2ProtocolError) {
        for setting in settings {
            switch setting.identifier {
            case .headerTableSize:
                encoder.setPeerMaxTableSize(Int(setting.value))
            case .maxConcurrentStreams:
                peerMaxConcurrentStreams = Int(setting.value)
            case .initialWindowSize:
                let delta = Int(setting.value) - peerInitialWindowSize
                for id in streams.keys {
                    streams[id]!.sendWindow += delta
                    if streams[id]!.sendWindow > Self.maxWindow {
                        throw .connection(.flowControlError, "SETTINGS_INITIAL_WINDOW_SIZE overflows a stream window")
                    }
                }
                peerInitialWindowSize = Int(setting.value)
            case .maxFrameSize:
                peerMaxFrameSize = Int(setting.value)
            default:
                continue
            }
        }
    }

    private mutating func windowUpdate(_ streamID: UInt32, _ increment: Int, output: inout [UInt8]) throws(HTTP2ProtocolError) {
        if streamID == 0 {
            guard increment > 0 else { throw .connection(.protocolError, "a connection WINDOW_UPDATE has an increment of 0") }
            connectionSendWindow += increment
            guard connectionSendWindow <= Self.maxWindow else {
                throw .connection(.flowControlError, "a WINDOW_UPDATE overflows the connection window")
            }
            for id in streams.keys.sorted() { flush(id, into: &output) }
            return
        }
        // Any frame but HEADERS or PRIORITY on a stream never opened ends the connection, an
        // increment of 0 too (§5.1); on a closed stream a WINDOW_UPDATE is ignored (§6.9); on an
        // open one, 0 is a stream error.
        try checkNotIdle(streamID, "a WINDOW_UPDATE")
        guard streams[streamID] != nil else { return }
        guard increment > 0 else { throw .stream(.protocolError, streamID, "a stream WINDOW_UPDATE has an increment of 0") }
        streams[streamID]!.sendWindow += increment
        guard streams[streamID]!.sendWindow <= Self.maxWindow else {
            throw .stream(.flowControlError, streamID, "a WINDOW_UPDATE overflows the stream window")
        }
        flush(streamID, into: &output)
    }

    private mutating func receiveData(_ streamID: UInt32, _ data: [UInt8], length: Int, endStream: Bool,
                                      output: inout [UInt8], actions: inout [HTTP2ConnectionAction]) throws(HTTP2ProtocolError) {
        guard length <= connectionReceiveWindow else {
            throw .connection(.flowControlError, "DATA exceeds the connection window")
        }
        connectionReceiveWindow -= length
        connectionReceivedSinceUpdate += length
        if connectionReceivedSinceUpdate >= configuration.connectionWindowSize / 2 {
            HTTP2Frame.windowUpdate(streamID: 0, increment: UInt32(connectionReceivedSinceUpdate)).serialize(into: &output)
            connectionReceiveWindow += connectionReceivedSinceUpdate
            connectionReceivedSinceUpdate = 0
        }
        try checkNotIdle(streamID, "a DATA")
        // A stream this side reset: its DATA still counted against the connection window.
        guard var stream = streams[streamID] else { return }
        guard length <= stream.receiveWindow else { throw .stream(.flowControlError, streamID, "DATA exceeds the stream window") }
        guard stream.phase == .receivingBody else { throw .stream(.protocolError, streamID, "DATA came before the response head") }
        stream.receiveWindow -= length
        stream.receivedSinceUpdate += length
        if !data.isEmpty { actions.append(.responseData(streamID: streamID, data)) }
        if endStream {
            streams[streamID] = stream
            finish(streamID, output: &output, actions: &actions)
            return
        }
        if !configuration.returnsStreamWindowsOnReceive {
            // The driver asks once it has delivered this DATA (``returnStreamWindows()``).
            if stream.receivedSinceUpdate >= configuration.initialWindowSize / 2 { streamsOwedWindow.append(streamID) }
        } else if !stream.paused, stream.receivedSinceUpdate >= configuration.initialWindowSize / 2 {
            HTTP2Frame.windowUpdate(streamID: streamID, increment: UInt32(stream.receivedSinceUpdate)).serialize(into: &output)
            stream.receiveWindow += stream.receivedSinceUpdate
            stream.receivedSinceUpdate = 0
        }
        streams[streamID] = stream
    }

    /// A complete field block (HEADERS and its CONTINUATIONs): decoded even for a stream that
    /// is gone, to keep HPACK in step, then a response head or trailers.
    private mutating func fieldBlockComplete(_ streamID: UInt32, endStream: Bool, _ block: [UInt8],
                                             output: inout [UInt8], actions: inout [HTTP2ConnectionAction]) throws(HTTP2ProtocolError) {
        pendingFieldBlock = nil
        let fields: [HPACKHeaderField]
        do {
            fields = try decoder.decode(block)
        } catch where error == .headerListTooLarge {
            guard streams[streamID] != nil else { return }
            throw .stream(.protocolError, streamID, HTTP2StreamFailure.headerListTooLarge)
        } catch {
            throw .connection(.compressionError, error.description)
        }
        guard let stream = streams[streamID] else { return }
        switch stream.phase {
        case .awaitingHead:
            guard let first = fields.first, first.name == ":status", first.value.utf8.count == 3,
                  let status = Int(first.value), (100...599).contains(status),
                  !fields.dropFirst().contains(where: { $0.name.hasPrefix(":") }) else {
                throw .stream(.protocolError, streamID, "the response head is malformed")
            }
            if let problem = HTTP2FieldValidation.problem(in: fields, pseudoPrefix: 1) {
                throw .stream(.protocolError, streamID, "the response head is malformed: \(problem)")
            }
            if status < 200 {
                guard status != 101, !endStream else { throw .stream(.protocolError, streamID, "an interim response is malformed") }
                return
            }
            streams[streamID]!.phase = .receivingBody
            actions.append(.responseHead(streamID: streamID, status: status, fields: Array(fields.dropFirst())))
        case .receivingBody:
            guard endStream else { throw .stream(.protocolError, streamID, "trailers do not end the stream") }
            if let problem = HTTP2FieldValidation.problem(in: fields, pseudoPrefix: 0) {
                throw .stream(.protocolError, streamID, "the trailers are malformed: \(problem)")
            }
            actions.append(.responseTrailers(streamID: streamID, fields))
        }
        if endStream { finish(streamID, output: &output, actions: &actions) }
    }

    /// The response is complete. If the request is still being sent, RST_STREAM(NO_ERROR)
    /// tells the server to expect no more of it (§8.1).
    private mutating func finish(_ streamID: UInt32, output: inout [UInt8], actions: inout [HTTP2ConnectionAction]) {
        guard let stream = streams.removeValue(forKey: streamID) else { return }
        if !stream.localClosed {
            HTTP2Frame.rstStream(streamID: streamID, code: .noError).serialize(into: &output)
        }
        actions.append(.streamFinished(streamID: streamID))
    }
}
