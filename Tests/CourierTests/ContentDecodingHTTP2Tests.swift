import Courier
import CourierHTTP2
import CourierTestServer
import CourierTestSupport
import Foundation
import Testing

/// The rule of ``ContentDecodingHeaderTests`` over HTTP/2: a body the native transport
/// decompressed comes without `content-encoding`, with its decoded `content-length` when it was
/// collected and none when it is streamed; the server's values stay in `contentDecoding`.
/// Against the scripted HTTP/2 peer (h2c by prior knowledge) and against nginx with `http2` and
/// `gzip on` over TLS.
@Suite("Decoded bodies carry truthful headers over HTTP/2")
struct ContentDecodingHTTP2Tests {
    static let plain = ContentDecodingHeaderTests.plain
    static let gzip = ContentDecodingHeaderTests.gzip
    static let needsNginx: Comment = "nginx and openssl are needed for the nginx HTTP/2 gzip test"

    /// Answers `GET /gzip` with the gzip body, its encoded `content-length` and a trailer;
    /// `HEAD /gzip` with the same fields and no body; anything else with the plain body.
    static func script(_ index: Int, _ connection: HTTP2PeerConnection) throws {
        try connection.start()
        while let request = try connection.nextRequest() {
            let method = request.fields.first { $0.name == ":method" }?.value
            guard request.path == "/gzip" else {
                connection.respond(request.streamID, headers: [("content-length", String(plain.count))], body: Array(plain))
                continue
            }
            let fields = [("content-encoding", "gzip"), ("content-length", String(gzip.count)), ("content-type", "text/plain")]
            if method == "HEAD" {
                connection.respond(request.streamID, headers: fields)
                continue
            }
            connection.respond(request.streamID, headers: fields, body: Array(gzip), end: false)
            let trailers = connection.fieldBlock([("checksum", "sum-1")])
            connection.send(.headers(streamID: request.streamID, fieldBlock: trailers, endStream: true, endHeaders: true))
        }
    }

    /// Runs `body` with a connection to a scripted peer running ``script(_:_:)``, over a native
    /// transport speaking HTTP/2 by prior knowledge, under a leak check.
    /// - Returns: how many connections the peer accepted.
    static func withPeer(_ body: (HTTPConnection) async throws -> Void) async throws -> Int {
        let peer = try HTTP2ScriptedPeer(script: script)
        defer { peer.close() }
        let configuration = NativeTransport.Configuration().speakingH2C()
        try await withLeakCheck { leaks throws in
            leaks.watch(port: peer.port)
            let transport = leaks.native(configuration)
            try await body(leaks.track(HTTPConnection(baseURL: peer.baseURL, configuration: .init(timeout: .seconds(10), transport: transport))))
        }
        return peer.connectionsAccepted
    }

    @Test("scripted HTTP/2 peer: a collected gzip body has no content-encoding, its decoded content-length and its trailers; a plain body keeps its fields")
    func collected() async throws {
        let connections = try await Self.withPeer { connection in
            let response = try await connection.get("/gzip")
            #expect(response.body == Self.plain)
            #expect(response.headers["content-encoding"] == nil)
            #expect(response.headers["content-length"] == String(Self.plain.count))
            #expect(response.headers["content-type"] == "text/plain")
            #expect(response.contentDecoding == HTTPResponse.ContentDecoding(contentEncoding: "gzip", encodedLength: Int64(Self.gzip.count)))
            #expect(response.trailers["checksum"] == "sum-1")
            #expect(response.metrics?.httpVersion == "HTTP/2")

            let plain = try await connection.get("/plain")
            #expect(plain.headers["content-length"] == String(Self.plain.count))
            #expect(plain.contentDecoding == nil)
        }
        #expect(connections == 1)
    }

    @Test("scripted HTTP/2 peer: a streamed gzip head has neither content-encoding nor content-length; a HEAD response keeps both")
    func streamedAndHead() async throws {
        _ = try await Self.withPeer { connection in
            let streamed = try await connection.stream(HTTPRequest(.get, "/gzip"))
            #expect(streamed.headers["content-encoding"] == nil)
            #expect(streamed.headers["content-length"] == nil)
            #expect(streamed.head.contentDecoding == HTTPResponse.ContentDecoding(contentEncoding: "gzip", encodedLength: Int64(Self.gzip.count)))
            var body = Data()
            for try await chunk in streamed.body { body.append(chunk) }
            #expect(body == Self.plain)

            let head = try await connection.head("/gzip")
            #expect(head.headers["content-encoding"] == "gzip")
            #expect(head.headers["content-length"] == String(Self.gzip.count))
            #expect(head.contentDecoding == nil)
        }
    }

    @Test("nginx with http2 and gzip over TLS: collected and streamed JSON arrive decoded, with truthful headers",
          .enabled(if: Nginx.isInstalled && TestCertificates.isAvailable, needsNginx))
    func nginx() async throws {
        let json = Data(String(repeating: #"{"room":"Lobby","text":"hello"},"#, count: 300).utf8)
        let certificates = try await TestCertificates.make()
        defer { certificates.remove() }
        // Two files: a response nginx marks as cacheable would answer the second request from the cache.
        let nginx = try await Nginx.start(files: ["rooms.json": json, "streamed.json": json],
                                          server: "gzip on; gzip_min_length 0; gzip_types application/json;",
                                          tls: (certificates.valid.certificate, certificates.valid.key), http2: true)
        defer { nginx.stop() }
        try await withLeakCheck { leaks throws in
            leaks.watch(port: nginx.port)
            let transport = leaks.native(.init(tls: TLSOptions(trustRoots: .pem(certificates.caPEM))))
            let connection = leaks.track(HTTPConnection(baseURL: nginx.url("/"), configuration: .init(timeout: .seconds(10), transport: transport)))
            let collected = try await connection.get("/rooms.json")
            #expect(collected.metrics?.httpVersion == "HTTP/2")
            #expect(collected.body == json)
            #expect(collected.headers["content-encoding"] == nil)
            #expect(collected.headers["content-length"] == String(json.count))
            #expect(collected.contentDecoding?.contentEncoding == "gzip")
            // nginx's gzip filter streams its output: it sends no length for the encoded body.
            #expect(collected.contentDecoding?.encodedLength == nil)

            let streamed = try await connection.stream(HTTPRequest(.get, "/streamed.json"))
            #expect(streamed.headers["content-encoding"] == nil)
            #expect(streamed.headers["content-length"] == nil)
            #expect(streamed.head.contentDecoding?.contentEncoding == "gzip")
            var body = Data()
            for try await chunk in streamed.body { body.append(chunk) }
            #expect(body == json)
        }
    }
}
