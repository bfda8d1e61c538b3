import Courier
import CourierTestServer
import CourierTestSupport
import Foundation
import Testing

/// multipart/form-data (RFC 7578), checked by an independent parser: Python's `email` package.
@Suite("Uploads: multipart/form-data")
struct MultipartTests {
    /// Parses a captured body (prefixed with its Content-Type) and prints each part as JSON.
    static let parser = #"""
    import sys, json, hashlib
    from email import policy
    from email.parser import BytesParser
    data = open(sys.argv[1], "rb").read()
    message = BytesParser(policy=policy.HTTP).parsebytes(data)
    result = {"multipart": message.is_multipart(), "defects": [type(d).__name__ for d in message.defects], "parts": []}
    for part in message.iter_parts():
        payload = part.get_payload(decode=True)
        result["parts"].append({
            "disposition": part.get_content_disposition(),
            "name": part.get_param("name", header="content-disposition"),
            "filename": part.get_param("filename", header="content-disposition"),
            "type": part.get_content_type() if part.get("content-type") else None,
            "length": len(payload),
            "sha256": hashlib.sha256(payload).hexdigest(),
            "defects": [type(d).__name__ for d in part.defects],
        })
    print(json.dumps(result))
    """#

    struct Parsed: Decodable {
        struct Part: Decodable {
            let disposition: String?
            let name: String?
            let filename: String?
            let type: String?
            let length: Int
            let sha256: String
            let defects: [String]
        }
        let multipart: Bool
        let defects: [String]
        let parts: [Part]
    }

    @Test("fields, an in-memory file with a non-ASCII name and a file from disk: Python's email parser reads them back exactly",
          .enabled(if: PythonHelper.isInstalled, PythonHelper.skipReason))
    func parsedByPython() async throws {
        let server = try TestServer(configuration: .init(maxBodyBytes: 16 << 20))
        defer { server.shutdown() }
        let captured = Locked<(body: Data, type: String, length: String)?>(nil)
        server.route("/form") { request in
            captured.withLock { $0 = (request.body, request.value(for: "Content-Type") ?? "", request.value(for: "Content-Length") ?? "") }
            return .text("ok")
        }
        let file = try TemporaryFile(size: 300_001, name: "photo.jpg")
        defer { file.remove() }
        let title = "Grüße, \"quoted\" and\r\n--not-a-boundary\r\n"
        let notes = Data("line one\r\n--\r\nline two".utf8)
        let filename = "résumé 2026 €.txt"

        var form = MultipartForm()
        form.append(name: "title", value: title)
        form.append(name: "notes", data: notes, filename: filename, contentType: "text/plain; charset=utf-8")
        try form.append(name: "photo", fileURL: file.url, contentType: "image/jpeg")
        form.append(name: "empty", value: "")

        try await withLeakCheck { leaks in
            let connection = leaks.connection(server, .native, timeout: .seconds(30))
            _ = try await connection.send(HTTPRequest(.post, "/form", body: .multipart(form)))
        }
        let (body, contentType, contentLength) = try #require(captured.withLock { $0 })
        #expect(contentType == form.contentType)
        #expect(contentLength == "\(body.count)")
        #expect(Int64(body.count) == form.length)
        #expect(form.boundary.hasPrefix("courier-") && form.boundary.count == 40)

        let capture = FileManager.default.temporaryDirectory.appendingPathComponent("courier-multipart-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: capture) }
        try (Data("Content-Type: \(contentType)\r\n\r\n".utf8) + body).write(to: capture)
        let output = try await PythonHelper.run(Self.parser, [capture.path])
        let parsed = try JSONDecoder().decode(Parsed.self, from: Data(output.utf8))

        #expect(parsed.multipart)
        #expect(parsed.defects.isEmpty, "\(parsed.defects)")
        try #require(parsed.parts.count == 4, "\(output)")
        let (titlePart, notesPart, photoPart, emptyPart) = (parsed.parts[0], parsed.parts[1], parsed.parts[2], parsed.parts[3])
        for part in parsed.parts {
            #expect(part.disposition == "form-data")
            #expect(part.defects.isEmpty, "\(part.defects)")
        }
        #expect(titlePart.name == "title" && titlePart.filename == nil && titlePart.type == nil)
        #expect(titlePart.sha256 == sha256Hex(Data(title.utf8)))
        #expect(notesPart.name == "notes" && notesPart.type == "text/plain")
        #expect(notesPart.filename?.removingPercentEncoding == filename, "\(String(describing: notesPart.filename))")
        #expect(notesPart.filename?.allSatisfy(\.isASCII) == true)
        #expect(notesPart.sha256 == sha256Hex(notes))
        #expect(photoPart.name == "photo" && photoPart.filename == "photo.jpg" && photoPart.type == "image/jpeg")
        #expect(photoPart.length == 300_001)
        #expect(photoPart.sha256 == sha256Hex(PatternChunks.bytes(from: 0, count: 300_001)))
        #expect(emptyPart.name == "empty" && emptyPart.length == 0)
    }

    @Test("the boundary is random and never occurs in an in-memory part")
    func boundary() {
        let boundaries = Set((0..<50).map { _ in MultipartForm().boundary })
        #expect(boundaries.count == 50)
        var form = MultipartForm()
        let first = form.boundary
        form.append(name: "trap", value: "xx\(first)xx")
        #expect(form.boundary != first)
        #expect(form.contentType == "multipart/form-data; boundary=\(form.boundary)")
    }

    @Test("an empty form is just the close delimiter, and its length is exact")
    func emptyForm() {
        let form = MultipartForm()
        #expect(form.length == Int64("--\(form.boundary)--\r\n".utf8.count))
    }
}
