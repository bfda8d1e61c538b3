import Foundation

/// A `multipart/form-data` body (RFC 7578) of fields and files, sent with
/// ``HTTPRequest/Body/multipart(_:)``.
///
/// Files are read as the body is sent, never loaded whole, so the form can carry files of any
/// size. The boundary is 32 random hexadecimal digits after `courier-`, and it is checked not
/// to occur in any in-memory part (a new one is drawn if it does). Every part's size is known,
/// so the body goes out with an exact `Content-Length`.
///
/// ```swift
/// var form = MultipartForm()
/// form.append(name: "title", value: "Holiday")
/// form.append(name: "notes", data: Data("…".utf8), filename: "notes.txt", contentType: "text/plain")
/// ```
public struct MultipartForm: Sendable {
    private enum Content: Sendable {
        case bytes(Data)
        case file(path: String, size: Int64)
    }

    private struct Part: Sendable {
        var head: Data
        var content: Content
    }

    private var parts: [Part] = []
    /// The boundary between the parts, without the leading dashes.
    public private(set) var boundary: String

    /// Creates an empty form with a random boundary.
    public init() {
        boundary = Self.randomBoundary()
    }

    /// The `Content-Type` of the body, naming the boundary.
    public var contentType: String { "multipart/form-data; boundary=\(boundary)" }

    /// Adds a text field, sent as UTF-8 without a `Content-Type` (RFC 7578 §4.4).
    /// - Parameters:
    ///   - name: the field's name.
    ///   - value: its value.
    public mutating func append(name: String, value: String) {
        add(head: Self.head(name: name, filename: nil, contentType: nil), content: .bytes(Data(value.utf8)))
    }

    /// Adds a part from bytes in memory, as a file when `filename` is given.
    /// - Parameters:
    ///   - name: the field's name.
    ///   - data: the part's bytes.
    ///   - filename: the file name shown to the server; non-ASCII characters are percent-encoded
    ///     (RFC 7578 §4.2). `nil` sends none.
    ///   - contentType: the part's `Content-Type`; `application/octet-stream` by default.
    public mutating func append(name: String, data: Data, filename: String? = nil,
                                contentType: String = "application/octet-stream") {
        add(head: Self.head(name: name, filename: filename, contentType: contentType), content: .bytes(data))
    }

    /// Adds a file, read when the body is sent. Its size is taken now; a file that holds another
    /// number of bytes when it is sent fails the request with ``HTTPConnectionError/invalidBody``.
    /// - Parameters:
    ///   - name: the field's name.
    ///   - fileURL: a `file:` URL of a regular file.
    ///   - filename: the file name shown to the server; the URL's last component by default.
    ///   - contentType: the part's `Content-Type`; `application/octet-stream` by default.
    /// - Throws: ``HTTPConnectionError/invalidBody`` when the file cannot be read or is not a
    ///   regular file.
    public mutating func append(name: String, fileURL: URL, filename: String? = nil,
                                contentType: String = "application/octet-stream") throws(HTTPConnectionError) {
        let size = try UploadFile.size(of: fileURL)
        add(head: Self.head(name: name, filename: filename ?? fileURL.lastPathComponent, contentType: contentType),
            content: .file(path: fileURL.path, size: size))
    }

    /// The body's length in bytes.
    public var length: Int64 { UploadBody(segments: segments()).length ?? 0 }

    private mutating func add(head: Data, content: Content) {
        parts.append(Part(head: head, content: content))
        while parts.contains(where: { Self.contains($0, Data(boundary.utf8)) }) {
            boundary = Self.randomBoundary()
        }
    }

    /// The body as pieces to send: each part's delimiter and head, its content, and the close
    /// delimiter.
    func segments() -> [UploadSegment] {
        var segments: [UploadSegment] = []
        var pending = Data()
        for (index, part) in parts.enumerated() {
            pending.append(Data(((index == 0 ? "" : "\r\n") + "--\(boundary)\r\n").utf8))
            pending.append(part.head)
            switch part.content {
            case .bytes(let data):
                pending.append(data)
            case .file(let path, let size):
                segments.append(.bytes(pending))
                pending = Data()
                segments.append(.file(path: path, size: size))
            }
        }
        pending.append(Data(((parts.isEmpty ? "" : "\r\n") + "--\(boundary)--\r\n").utf8))
        segments.append(.bytes(pending))
        return segments
    }

    /// A part's header fields and the empty line after them.
    private static func head(name: String, filename: String?, contentType: String?) -> Data {
        var text = "Content-Disposition: form-data; name=\"\(escape(name, asFilename: false))\""
        if let filename { text += "; filename=\"\(escape(filename, asFilename: true))\"" }
        text += "\r\n"
        if let contentType { text += "Content-Type: \(contentType.filter { $0 != "\r" && $0 != "\n" })\r\n" }
        text += "\r\n"
        return Data(text.utf8)
    }

    /// Makes a parameter value safe inside quotes: `"`, `\`, `%` and control characters are
    /// percent-encoded, and so is every non-ASCII byte of a file name (RFC 7578 §4.2, the way a
    /// `file:` URI encodes it); field names keep UTF-8 as it is (§5.1).
    private static func escape(_ text: String, asFilename: Bool) -> String {
        var out: [UInt8] = []
        for byte in text.utf8 {
            let plain = byte >= 0x20 && byte != 0x7F && byte != 0x22 && byte != 0x5C
                && (byte < 0x80 || !asFilename) && (byte != 0x25 || !asFilename)
            if plain {
                out.append(byte)
            } else {
                out.append(contentsOf: "%\(String(byte, radix: 16, uppercase: true).leftPadded(to: 2))".utf8)
            }
        }
        return String(decoding: out, as: UTF8.self)
    }

    private static func contains(_ part: Part, _ boundary: Data) -> Bool {
        if part.head.range(of: boundary) != nil { return true }
        if case .bytes(let data) = part.content { return data.range(of: boundary) != nil }
        return false
    }

    private static func randomBoundary() -> String {
        var generator = SystemRandomNumberGenerator()
        let digits = (0..<4).map { _ in String(generator.next() as UInt32, radix: 16).leftPadded(to: 8) }
        return "courier-" + digits.joined()
    }
}

extension String {
    /// The string with leading zeros up to `width` characters.
    fileprivate func leftPadded(to width: Int) -> String {
        count >= width ? self : String(repeating: "0", count: width - count) + self
    }
}
