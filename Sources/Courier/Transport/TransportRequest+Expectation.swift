import CourierHTTP1

extension TransportRequest {
    /// Whether the request carries `Expect: 100-continue` and a body to hold back for it: the
    /// native transport's HTTP/1.1 connections then send the head first (see
    /// ``HTTP1ConnectionStateMachine``), and ``ExpectationStage`` repeats the request without
    /// the field after a `417`.
    var expectsContinue: Bool {
        (upload.map { $0.length != 0 } ?? !body.isEmpty)
            && headers.values(for: "Expect").contains { HTTPFieldList.value($0, contains: "100-continue") }
    }
}
