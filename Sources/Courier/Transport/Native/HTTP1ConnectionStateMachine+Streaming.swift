import CourierWire

extension HTTP1ConnectionStateMachine {
    /// Hands the streamed body's content decoding to the exchange (once: later calls give `nil`).
    mutating func takeStreamedDecoding() -> StreamedBodyDecoding? {
        defer { streamedDecoding = nil }
        return streamedDecoding
    }

    /// The consumer of the streamed body holds as much as it will buffer: reading stops, and so
    /// does the silence timeout, until ``consumerResumed(at:)``.
    mutating func consumerPaused() -> Action {
        guard state == .busy(.receivingBody), request?.streamsBody == true, !readPaused else { return .none }
        readPaused = true
        return .stopReading
    }

    /// The consumer of the streamed body wants more at `now`: reading starts again, and the
    /// server has a whole timeout from now to send the next bytes.
    mutating func consumerResumed(at now: UInt64) -> Action {
        guard readPaused else { return .none }
        readPaused = false
        guard state == .busy(.receivingBody), let request else { return .none }
        lastProgress = now
        return .resumeReading(timerAt: now &+ request.timeoutNanoseconds)
    }
}
