@testable import Courier
import CourierHTTP2
import Foundation
import Testing

/// The value types between an exchange and an HTTP/2 stream, without sockets: the request's
/// field block (``HTTP2RequestHeaders``) and the response's assembly (``HTTP2ResponseAssembler``).
@Suite("HTTP/2 request fields and response assembly")
struct HTTP2ExchangeValueTests {
    static let url = URL(string: "https://example.com:8443/rooms?q=a%20b")!
    static let limits = HTTP2ResponseAssembler.Limits(maxFieldCount: 10, decompression: true,
                                                      maxDecompressedBytes: 1 << 20, maxDecompressionRatio: 100)

    static func assembler(method: String = "GET", maxBodySize: Int = 1000, streams: Bool = false,
                          observes: Bool = false) -> HTTP2ResponseAssembler {
        HTTP2ResponseAssembler(request: .init(url: url, method: method, maxBodySize: maxBodySize, streamsBody: streams,
                                              observesBody: observes), limits: limits)
    }

    @Test("pseudo-header fields first, names in lowercase, defaults added, connection-specific fields dropped")
    func requestFields() throws {
        var request = TransportRequest(method: .post, url: Self.url, body: Data("hello".utf8))
        request.headers = ["Accept": "application/json", "Connection": "keep-alive", "Transfer-Encoding": "chunked",
                           "Content-Length": "99", "TE": "trailers", "Keep-Alive": "5", "Upgrade": "h2c", "X-Trace": "1"]
        let target = try NativeRequestTarget(url: Self.url, proxies: .none)
        let fields = HTTP2RequestHeaders.fields(for: request, target: target, secure: true, acceptEncoding: true)
        #expect(fields.map(\.name) == [":method", ":scheme", ":authority", ":path", "accept", "te", "x-trace",
                                       "user-agent", "accept-encoding", "content-length"])
        #expect(fields[0].value == "POST" && fields[1].value == "https")
        #expect(fields[2].value == "example.com:8443")
        #expect(fields[3].value == "/rooms?q=a%20b")
        #expect(fields.last?.value == "5")
    }

    @Test("a Host field becomes :authority; a caller's User-Agent and Accept-Encoding are kept; te other than trailers is dropped")
    func requestOverrides() throws {
        var request = TransportRequest(method: .get, url: Self.url)
        request.headers = ["Host": "api.example", "User-Agent": "me", "Accept-Encoding": "br", "TE": "gzip"]
        let target = try NativeRequestTarget(url: Self.url, proxies: .none)
        let fields = HTTP2RequestHeaders.fields(for: request, target: target, secure: false, acceptEncoding: true)
        #expect(fields.map { "\($0.name)=\($0.value)" } == [":method=GET", ":scheme=http", ":authority=api.example",
                                                            ":path=/rooms?q=a%20b", "user-agent=me", "accept-encoding=br"])
    }

    @Test("head, body and trailers make the response; the declared length must match")
    func response() throws {
        var response = Self.assembler()
        let head = try response.receiveHead(status: 200, fields: [HPACKHeaderField(name: "content-length", value: "5")])
        #expect(head.status.code == 200 && head.expectedContentLength == 5)
        #expect(try response.receiveData(Array("hel".utf8)) == nil)
        #expect(try response.receiveData(Array("lo".utf8)) == nil)
        response.receiveTrailers([HPACKHeaderField(name: "grpc-status", value: "0")])
        let finished = try response.finish()
        #expect(finished.text == "hello")
        #expect(finished.trailers["grpc-status"] == "0")
        #expect(response.wireBytes == 5)
    }

    @Test("a body shorter or longer than its content-length is a badResponse; HEAD and 304 expect none")
    func lengthMismatch() throws {
        var short = Self.assembler()
        _ = try short.receiveHead(status: 200, fields: [HPACKHeaderField(name: "content-length", value: "5")])
        _ = try short.receiveData([1, 2])
        #expect(throws: HTTPConnectionError.badResponse) { try short.finish() }
        var long = Self.assembler()
        _ = try long.receiveHead(status: 200, fields: [HPACKHeaderField(name: "content-length", value: "1")])
        #expect(throws: HTTPConnectionError.badResponse) { try long.receiveData([1, 2]) }
        var head = Self.assembler(method: "HEAD")
        _ = try head.receiveHead(status: 200, fields: [HPACKHeaderField(name: "content-length", value: "5000")])
        #expect(try head.finish().body.isEmpty)
        var notModified = Self.assembler()
        _ = try notModified.receiveHead(status: 304, fields: [HPACKHeaderField(name: "content-length", value: "5000")])
        #expect(try notModified.finish().status.code == 304)
    }

    @Test("limits: too many fields, a declared length past the limit, a body past the limit")
    func limits() throws {
        var fields = Self.assembler()
        #expect(throws: HTTPConnectionError.headTooLarge) {
            try fields.receiveHead(status: 200, fields: (0..<11).map { HPACKHeaderField(name: "x-\($0)", value: "1") })
        }
        var declared = Self.assembler(maxBodySize: 10)
        #expect(throws: HTTPConnectionError.bodyTooLarge) {
            try declared.receiveHead(status: 200, fields: [HPACKHeaderField(name: "content-length", value: "11")])
        }
        var body = Self.assembler(maxBodySize: 10)
        _ = try body.receiveHead(status: 200, fields: [])
        _ = try body.receiveData([UInt8](repeating: 0, count: 10))
        #expect(throws: HTTPConnectionError.bodyTooLarge) { try body.receiveData([0]) }
        var streamed = Self.assembler(maxBodySize: 10, streams: true)
        _ = try streamed.receiveHead(status: 200, fields: [HPACKHeaderField(name: "content-length", value: "100")])
        #expect(try streamed.receiveData([UInt8](repeating: 7, count: 100)) == Data(repeating: 7, count: 100))
    }

    @Test("gzip is decoded, observers get copies, the head loses content-encoding and content-length (the response gets the decoded length), a broken stream is decompressionFailed")
    func contentDecoding() throws {
        let plain = Data(String(repeating: "courier ", count: 100).utf8)
        let compressed = gzipCompressed(plain)
        var response = Self.assembler(observes: true)
        let head = try response.receiveHead(status: 200, fields: [HPACKHeaderField(name: "content-encoding", value: "gzip"),
                                                                   HPACKHeaderField(name: "content-length", value: String(compressed.count))])
        #expect(head.headers["content-encoding"] == nil && head.headers["content-length"] == nil)
        #expect(head.contentDecoding == HTTPResponse.ContentDecoding(contentEncoding: "gzip", encodedLength: Int64(compressed.count)))
        var observed = Data()
        for chunk in stride(from: 0, to: compressed.count, by: 50) {
            if let copy = try response.receiveData(Array(compressed[chunk..<min(chunk + 50, compressed.count)])) { observed.append(copy) }
        }
        #expect(observed == plain)
        let finished = try response.finish()
        #expect(finished.body == plain)
        #expect(finished.headers["content-length"] == String(plain.count))
        #expect(finished.contentDecoding?.encodedLength == Int64(compressed.count))
        var broken = Self.assembler()
        _ = try broken.receiveHead(status: 200, fields: [HPACKHeaderField(name: "content-encoding", value: "gzip")])
        #expect(throws: HTTPConnectionError.decompressionFailed) {
            _ = try broken.receiveData([UInt8](repeating: 0xFF, count: 64))
            _ = try broken.finish()
        }
    }

    @Test("a stream that ends without a head is a badResponse")
    func noHead() {
        var response = Self.assembler()
        #expect(throws: HTTPConnectionError.badResponse) { try response.finish() }
    }
}
