import Foundation

extension TestServer {
    /// The body of `/ranged/<n>`: `count` bytes that never repeat with a short period (each
    /// 8-byte word is SplitMix64 of its index), so that a byte range served from the wrong offset
    /// changes the file's digest.
    ///
    /// - Parameter count: How many bytes.
    /// - Returns: The bytes; `rangedBody(count: n)[i]` is the same for every `n > i`.
    public static func rangedBody(count: Int) -> Data {
        var data = Data(count: max(count, 0))
        data.withUnsafeMutableBytes { raw in
            var word = 0
            var offset = 0
            while offset < raw.count {
                var generator = SeededRandom(seed: UInt64(word))
                var value = generator.next()
                for index in offset..<min(offset + 8, raw.count) {
                    raw[index] = UInt8(truncatingIfNeeded: value)
                    value >>= 8
                }
                word += 1
                offset += 8
            }
        }
        return data
    }

    /// What a ``rangedReply(_:body:etag:lastModified:cutAt:)`` sends.
    public struct RangedReply: Sendable {
        /// The reply.
        public let reply: Reply
        /// How many body bytes it sends (fewer than announced when cut).
        public let bodyBytes: Int
        /// The status: 200, 206 or 416.
        public let status: Int
    }

    /// A resource with validators and byte ranges, as a download meets it (RFC 9110 section 14):
    ///
    /// - `Range: bytes=first-` or `bytes=first-last` (one range) answers `206` with
    ///   `Content-Range`, unless `If-Range` is present and matches neither the `ETag` (strong
    ///   comparison) nor the `Last-Modified` date exactly: then the whole body, `200`;
    /// - a range starting at or past the end answers `416` with `Content-Range: bytes */<length>`;
    /// - any other `Range` value is ignored (`200`), as RFC 9110 allows;
    /// - `cutAt` (0...1) sends only that share of the body it announced, then closes the
    ///   connection: a download broken off in the middle.
    ///
    /// - Parameters:
    ///   - request: The request.
    ///   - body: The whole representation.
    ///   - etag: The `ETag` field value (with its quotes), or `nil` for none.
    ///   - lastModified: The `Last-Modified` field value, or `nil` for none.
    ///   - cutAt: The share of the announced body to send before closing; `nil` sends it all.
    /// - Returns: The reply and what it sends.
    public static func rangedReply(_ request: Request, body: Data, etag: String?, lastModified: String?,
                                   cutAt: Double? = nil) -> RangedReply {
        var headers: [(String, String)] = [("Content-Type", "application/octet-stream"), ("Accept-Ranges", "bytes")]
        if let etag { headers.append(("ETag", etag)) }
        if let lastModified { headers.append(("Last-Modified", lastModified)) }
        var status = 200
        var slice = body[...]
        if let range = request.value(for: "Range"), ifRangeHolds(request, etag: etag, lastModified: lastModified),
           let (first, last) = singleRange(range, length: body.count) {
            guard first < body.count else {
                headers.append(("Content-Range", "bytes */\(body.count)"))
                return RangedReply(reply: .response(status: 416, headers: headers), bodyBytes: 0, status: 416)
            }
            status = 206
            slice = body[first...last]
            headers.append(("Content-Range", "bytes \(first)-\(last)/\(body.count)"))
        }
        guard let cutAt else {
            return RangedReply(reply: .response(status: status, headers: headers, body: Data(slice)),
                               bodyBytes: slice.count, status: status)
        }
        let sent = Int(Double(slice.count) * min(max(cutAt, 0), 1))
        var wire = "HTTP/1.1 \(status) \(status == 206 ? "Partial Content" : "OK")\r\n"
        for (name, value) in headers { wire += "\(name): \(value)\r\n" }
        wire += "Content-Length: \(slice.count)\r\n\r\n"
        var bytes = Data(wire.utf8)
        bytes.append(contentsOf: slice.prefix(sent))
        return RangedReply(reply: .script([.send(bytes), .close]), bodyBytes: sent, status: status)
    }

    /// Whether a `Range` is to be honoured: no `If-Range`, or one equal to the strong `ETag` or
    /// to the `Last-Modified` date.
    private static func ifRangeHolds(_ request: Request, etag: String?, lastModified: String?) -> Bool {
        guard let condition = request.value(for: "If-Range") else { return true }
        if let etag, !etag.hasPrefix("W/"), condition == etag { return true }
        if let lastModified, condition == lastModified { return true }
        return false
    }

    /// The one range of `bytes=first-` or `bytes=first-last`, the last clamped to the end; `nil`
    /// for anything else (suffix ranges, several ranges, other units).
    private static func singleRange(_ value: String, length: Int) -> (Int, Int)? {
        guard let spec = value.dropPrefix("bytes="), !spec.contains(",") else { return nil }
        let bounds = spec.split(separator: "-", maxSplits: 1, omittingEmptySubsequences: false)
        guard bounds.count == 2, let first = Int(bounds[0]), first >= 0 else { return nil }
        if bounds[1].isEmpty { return (first, length - 1) }
        guard let last = Int(bounds[1]), last >= first else { return nil }
        return (first, min(last, length - 1))
    }

    /// `/ranged/<n>?etag=<tag>&cut=<percent>&validators=none`: ``rangedBody(count:)`` served by
    /// ``rangedReply(_:body:etag:lastModified:cutAt:)``, with `ETag: "<tag>"` (`"v1"` by default)
    /// and a fixed `Last-Modified`; `validators=none` sends neither.
    static func ranged(_ text: Substring, _ request: Request) -> Reply {
        guard let count = Int(text), (0...maxGeneratedBytes).contains(count) else {
            return badRequest("byte count must be 0...\(maxGeneratedBytes), got \"\(text)\"")
        }
        let bare = request.queryValue("validators") == "none"
        let etag = bare ? nil : "\"\(request.queryValue("etag") ?? "v1")\""
        let cut = request.queryInt("cut").map { Double($0) / 100 }
        return rangedReply(request, body: rangedBody(count: count), etag: etag,
                           lastModified: bare ? nil : "Sun, 06 Nov 1994 08:49:37 GMT", cutAt: cut).reply
    }
}
