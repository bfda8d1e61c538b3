import Foundation
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

    /// This request without the `100-continue` member of its `Expect` fields (RFC 9110 §10.1.1:
    /// after a `417`, a client repeats the request without that expectation); any other
    /// expectation stays, in one field, and a field left empty goes.
    var withoutContinueExpectation: TransportRequest {
        var request = self
        let others = headers.values(for: "Expect").flatMap { $0.split(separator: ",") }
            .map { $0.trimmingCharacters(in: .whitespaces) }
            .filter { !$0.isEmpty && $0.lowercased() != "100-continue" }
        request.headers.remove("Expect")
        if !others.isEmpty { request.headers.add(others.joined(separator: ", "), for: "Expect") }
        return request
    }
}
