@testable import CourierHTTP2
import CourierTestServer

/// How one request on an HTTP/2 connection ends, as RFC 9113 makes it end for the moves the
/// model peer made (the model's prediction), or as the client machine reported it.
enum HTTP2ModelOutcome: Equatable, CustomStringConvertible {
    /// A complete response: the final status, its fields (without `:status`), the body octets
    /// however the peer split them, and the trailers (empty when none came).
    case response(status: Int, fields: [HPACKHeaderField], body: [UInt8], trailers: [HPACKHeaderField])
    /// The stream failed with this code; `retryable` when the server certainly did not process
    /// it (REFUSED_STREAM, or a stream above a GOAWAY's last stream id: §8.7).
    case failed(HTTP2ErrorCode, retryable: Bool)
    /// The client cancelled the stream: nothing more is reported for it.
    case cancelled

    /// A short description for failure messages (bodies as their length).
    var description: String {
        switch self {
        case .response(let status, let fields, let body, let trailers):
            "response \(status) fields \(fields.map { "\($0.name)=\($0.value)" }) body \(body.count) octets trailers \(trailers.map { "\($0.name)=\($0.value)" })"
        case .failed(let code, let retryable):
            "failed \(code) retryable \(retryable)"
        case .cancelled:
            "cancelled"
        }
    }
}

/// One request of a model conversation and the response the peer means to give it.
struct HTTP2ModelRequest: Sendable {
    /// The request body, or `nil` for a request without one (HEADERS with END_STREAM).
    var upload: [UInt8]?
    /// Whether a 103 interim response comes before the final head.
    var interim: Bool
    /// The final status.
    var status: Int
    /// The response fields after `:status`.
    var fields: [HPACKHeaderField]
    /// The response body.
    var body: [UInt8]
    /// The trailers (none when empty).
    var trailers: [HPACKHeaderField]

    /// The request's fields: pseudo-header fields first, `:path` naming the request's index.
    func requestFields(index: Int) -> [HPACKHeaderField] {
        [HPACKHeaderField(name: ":method", value: upload == nil ? "GET" : "POST"),
         HPACKHeaderField(name: ":scheme", value: "https"),
         HPACKHeaderField(name: ":authority", value: "model.test"),
         HPACKHeaderField(name: ":path", value: "/r\(index)")]
    }

    /// A random request: a third without a body, uploads of up to 150,000 octets; responses of
    /// up to 150,000 octets, or `bigBody` octets when set.
    static func random(using random: inout SeededRandom, bigBody: Int?) -> HTTP2ModelRequest {
        let uploadSize: Int? = switch Int.random(in: 0..<6, using: &random) {
        case 0, 1: nil
        case 2: 0
        case 3, 4: Int.random(in: 1...3_000, using: &random)
        default: Int.random(in: 65_000...150_000, using: &random)
        }
        let status = [200, 200, 201, 204, 404, 500].randomElement(using: &random)!
        let bodySize = status == 204 ? 0 : bigBody ?? [0, Int.random(in: 1...2_000, using: &random),
                                                         Int.random(in: 20_000...150_000, using: &random)].randomElement(using: &random)!
        let fieldCount = Int.random(in: 0...4, using: &random)
        let trailerCount = Bool.random(using: &random) ? 0 : Int.random(in: 1...2, using: &random)
        return HTTP2ModelRequest(
            upload: uploadSize.map { octets($0, using: &random) },
            interim: Int.random(in: 0..<5, using: &random) == 0,
            status: status,
            fields: (0..<fieldCount).map { HPACKHeaderField(name: "x-f\($0)", value: token(using: &random)) },
            body: octets(bodySize, using: &random),
            trailers: (0..<trailerCount).map { HPACKHeaderField(name: "x-t\($0)", value: token(using: &random)) })
    }

    /// `count` octets: a random start, then counting up, so that a moved or lost octet shows.
    private static func octets(_ count: Int, using random: inout SeededRandom) -> [UInt8] {
        let start = UInt8.random(in: 0...255, using: &random)
        // Written through a buffer: a `map` over a range is slow in a debug build.
        return [UInt8](unsafeUninitializedCapacity: count) { buffer, initialized in
            var index = 0
            while index < count {
                buffer[index] = start &+ UInt8(truncatingIfNeeded: index &* 7 &+ index >> 8)
                index += 1
            }
            initialized = count
        }
    }

    /// A field value of 1 to 40 visible characters (sometimes long enough to need CONTINUATION
    /// when the peer splits blocks finely).
    private static func token(using random: inout SeededRandom) -> String {
        let alphabet = Array("abcdefghijklmnopqrstuvwxyz0123456789-_.~")
        return String((0..<Int.random(in: 1...40, using: &random)).map { _ in alphabet.randomElement(using: &random)! })
    }
}
