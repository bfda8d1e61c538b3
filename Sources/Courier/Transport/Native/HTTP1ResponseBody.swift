import CourierHTTP1
import Foundation

/// The body of one response as it arrives: the payload runs of ``BodyDecoder`` go in, content
/// decoding and the size limits are applied, and the bytes accumulate in one `Data`.
///
/// It lives in ``HTTP1ConnectionStateMachine`` rather than in the exchange because the limits
/// are the machine's rules and the tests must see them without an exchange; the bytes are copied
/// once, from the read buffer into ``data``, and the finished `Data` is moved into the
/// ``HTTPResponse`` without another copy. Bytes for an observer are copied out separately, only
/// when the observer asked for them (as before).
///
/// The ``ContentDecoder`` is a class (it owns zlib's state): a copy of this value shares it, so
/// only one copy may be fed.
struct HTTP1ResponseBody {
    /// The most encoded bytes handed to the content decoder at once: one step of a compression
    /// bomb expands to at most about 4 MiB before the size checks see it.
    static let decodeStep = 4096

    /// The (decoded) body so far.
    private(set) var data = Data()
    /// Body bytes received on the wire so far, before content decoding (chunk framing excluded).
    private(set) var wireBytes = 0
    /// The largest body accepted, decoded or not.
    let limit: Int
    /// The declared `Content-Length`, reported to the observer as the expected total.
    let declaredLength: Int64?
    /// Removes a `gzip` or `deflate` content coding, when the response has one.
    private var contentDecoder: ContentDecoder?
    /// How many bytes of ``data`` were handed to the observer.
    private var observed = 0

    /// An empty body, before any response.
    init() {
        self.init(limit: .max, declaredLength: nil, contentDecoder: nil)
    }

    /// A body of at most `limit` bytes, with a declared length and a content decoder if any.
    /// `reservesDeclaredLength` reserves room for the declared length (up to 1 MiB) at once; a
    /// streamed body, handed out as it arrives, does not.
    init(limit: Int, declaredLength: Int64?, contentDecoder: ContentDecoder?, reservesDeclaredLength: Bool = true) {
        self.limit = limit
        self.declaredLength = declaredLength
        self.contentDecoder = contentDecoder
        if reservesDeclaredLength, let declaredLength, declaredLength > 0 {
            data.reserveCapacity(Int(min(declaredLength, 1 << 20)))
        }
    }

    /// Adds a run of body bytes as they came off the wire (content-coded or not).
    /// - Throws: ``HTTPConnectionError/bodyTooLarge`` past the limit, or the content decoder's
    ///   `HTTP1Error`.
    mutating func append(_ run: UnsafeRawBufferPointer) throws {
        wireBytes &+= run.count
        if wireBytes > limit { throw NativeErrors.bodyTooLarge(limit: limit) }
        guard let contentDecoder else {
            try store(run)
            return
        }
        var offset = 0
        while offset < run.count {
            let end = min(offset + Self.decodeStep, run.count)
            let decoded = try contentDecoder.decode(UnsafeRawBufferPointer(rebasing: run[offset..<end]))
            offset = end
            if !decoded.isEmpty {
                try decoded.withUnsafeBytes { bytes in try store(bytes) }
            }
        }
    }

    /// Checks that a content-coded body ended properly, and releases the content decoder.
    mutating func finish() throws(HTTP1Error) {
        defer { contentDecoder = nil }
        try contentDecoder?.finish()
    }

    /// The bytes added since the last call, copied for the observer; `nil` when there are none.
    mutating func takeUnobserved() -> Data? {
        guard data.count > observed else { return nil }
        let start = observed
        observed = data.count
        return data.withUnsafeBytes { all in Data(UnsafeRawBufferPointer(rebasing: all[start...])) }
    }

    /// Moves the bytes added so far out (a streamed body's next chunk), leaving the body empty;
    /// `nil` when there are none.
    mutating func takeAll() -> Data? {
        guard !data.isEmpty else { return nil }
        return takeData()
    }

    /// Moves the accumulated bytes out, leaving the body empty.
    mutating func takeData() -> Data {
        let taken = data
        data = Data()
        observed = 0
        return taken
    }

    /// Appends decoded bytes within the limit.
    private mutating func store(_ bytes: UnsafeRawBufferPointer) throws {
        if data.count + bytes.count > limit { throw NativeErrors.bodyTooLarge(limit: limit) }
        data.append(contentsOf: bytes)
    }
}
