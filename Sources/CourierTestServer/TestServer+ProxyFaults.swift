import Foundation

extension TestServer {
    /// How a server in misbehaving-proxy mode (``Configuration/proxyFault``) answers every
    /// request, `CONNECT` or not. The faults a client must turn into clear proxy errors.
    public enum ProxyFault: Sendable, Equatable {
        /// Answers with this status (`403`, `407` with a `Proxy-Authenticate: Basic` challenge,
        /// `502`, …) and a short body, then closes.
        case status(Int)
        /// Closes the connection without answering, once the request head was read.
        case closeBeforeAnswer
        /// Sends half of a `200` status line, then closes.
        case closeMidAnswer
        /// Sends `HTTP/1.1 200 OK\r\n`, then one header byte every `interval`, never ending the
        /// head (at most 10,000 bytes), so the client's connect timeout must end it.
        case trickle(interval: Duration)
        /// Answers `200 Connection established` followed by bytes the origin never sent.
        case bytesAfterEstablished
    }

    /// The script of a proxy fault.
    static func proxyFaultReply(_ fault: ProxyFault) -> Reply {
        switch fault {
        case .status(let status):
            let challenge = status == 407 ? "Proxy-Authenticate: Basic realm=\"courier-test-proxy\"\r\n" : ""
            return .script([
                .send("HTTP/1.1 \(status) Proxy Fault\r\n\(challenge)Content-Type: text/plain\r\nContent-Length: 5\r\nConnection: close\r\n\r\nfault"),
                .close,
            ])
        case .closeBeforeAnswer:
            return .script([.close])
        case .closeMidAnswer:
            return .script([.send("HTTP/1.1 200 Conn"), .close])
        case .trickle(let interval):
            var steps: [Step] = [.send("HTTP/1.1 200 OK\r\nX-Trickle: ")]
            for _ in 0..<10_000 {
                steps.append(.pause(interval))
                steps.append(.send("x"))
            }
            steps.append(.close)
            return .script(steps)
        case .bytesAfterEstablished:
            return .script([.send("HTTP/1.1 200 Connection established\r\n\r\nunexpected"), .stall])
        }
    }
}
