import Courier
import CourierTestServer
import CourierTestSupport
import Foundation
import Testing

/// curl command lines and HAR files, checked with the real tools: curl against the test server,
/// and Python's `json` on the archive.
@Suite("Export for debugging")
struct ExportTests {
    static let curl = ["/usr/bin/curl", "/usr/local/bin/curl"].first { FileManager.default.isExecutableFile(atPath: $0) }
    static let python = ["/usr/bin/python3", "/usr/local/bin/python3", "/root/.pyenv/shims/python3"]
        .first { FileManager.default.isExecutableFile(atPath: $0) }

    /// Runs a shell command (bounded to 20 s); returns its exit status and standard output.
    static func shell(_ command: String) async throws -> (Int32?, String) {
        let output = FileManager.default.temporaryDirectory.appendingPathComponent("courier-export-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: output) }
        let child = try ChildProcess.spawn("/bin/sh", ["-c", command], stdout: output.path, stderr: output.path)
        let status = await child.wait(timeout: .seconds(20))
        return (status, (try? String(contentsOf: output, encoding: .utf8)) ?? "")
    }

    @Test("the curl command, run for real, makes the request Courier would: method, URL, query, headers, body",
          .enabled(if: curl != nil, "curl is not installed (apt-get install curl); the curl export test is skipped"))
    func curlRoundTrip() async throws {
        let server = try TestServer()
        defer { server.shutdown() }
        try await withLeakCheck { leaks in
            let connection = leaks.connection(server, .native) { $0.headers = ["X-Api-Key": "k3y"] }
            let body = "{\"note\": \"it's $HOME and `date` \\\\ \\\"quoted\\\"\", \"password\": \"pw\"}"
            let request = HTTPRequest(.post, "/echo/it's", query: [.init("q", "a b&c"), .init("flag", nil)],
                                      headers: ["Authorization": "Bearer s3cret", "X-Quote": "it's \"fine\""],
                                      body: .text(body, contentType: "application/json"))
            let command = try connection.curlCommand(for: request, includingCredentials: true)
            let (status, output) = try await Self.shell(command + " --silent --show-error")
            #expect(status == 0, "\(output)")
            let seen = try JSONDecoder().decode(Echo.self, from: Data(output.utf8))
            let courier = try await connection.send(request).decode(Echo.self)
            #expect(seen.method == "POST")
            #expect(seen.path == courier.path)
            #expect(seen.query == courier.query)
            #expect(seen.body == body)
            for name in ["Authorization", "X-Quote", "X-Api-Key", "Content-Type"] {
                #expect(seen.header(name) == courier.header(name), "\(name)")
            }

            // By default, credentials are redacted: the header values, the key, and the JSON password.
            let redacted = try connection.curlCommand(for: request)
            #expect(!redacted.contains("s3cret") && !redacted.contains("k3y") && !redacted.contains("\"pw\""))
            #expect(redacted.contains("Authorization: <redacted>"))

            // A binary body survives through printf; HEAD becomes --head.
            let bytes = Data((0...255).map { UInt8($0) })
            let binary = try connection.curlCommand(for: HTTPRequest(.put, "/echo/bin", body: .data(bytes)))
            let (binaryStatus, binaryOutput) = try await Self.shell(binary + " --silent")
            #expect(binaryStatus == 0)
            let echoed = try JSONDecoder().decode(Echo.self, from: Data(binaryOutput.utf8))
            #expect(echoed.method == "PUT" && echoed.bodyLength == 256)
            #expect(try connection.curlCommand(for: HTTPRequest(.head, "/echo")).contains("--head"))
        }
    }

    @Test("the HAR file has every field HAR 1.2 requires, one entry per hop and attempt, credentials redacted",
          .enabled(if: python != nil, "python3 is not installed; the HAR export test is skipped"))
    func harFile() async throws {
        let server = try TestServer()
        defer { server.shutdown() }
        let file = FileManager.default.temporaryDirectory.appendingPathComponent("courier-\(UUID().uuidString).har")
        defer { try? FileManager.default.removeItem(at: file) }
        let recorder = HARRecorder(maximumBodySize: 100)
        try await withLeakCheck { leaks in
            let connection = leaks.connection(server, .native) {
                $0.harRecorder = recorder
                $0.cookieJar = CookieJar()
                $0.cache = nil
            }
            // Routes that do not echo the request: the server is not to put secrets back in the body.
            _ = try await connection.get("/status/200", query: [.init("token", "t0ken"), .init("page", "2")],
                                         headers: ["Authorization": "Bearer s3cret"])
            _ = try await connection.send(HTTPRequest(.post, "/status/201", body: .form(["user": "alice", "password": "pw123"])))
            server.route("/login") { _ in
                .response(status: 302, headers: [("Location", "/status/200"), ("Set-Cookie", "sid=c00kie; Path=/; HttpOnly")])
            }
            _ = try await connection.get("/login")
            _ = try await connection.get("/bytes/1000")
            await #expect(throws: HTTPConnectionError.self) { try await connection.get("/status/404") }
        }
        #expect(recorder.count == 6)
        let data = try recorder.harData()
        try data.write(to: file)
        let text = String(decoding: data, as: UTF8.self)
        for secret in ["s3cret", "t0ken", "pw123", "c00kie"] {
            #expect(!text.contains(secret), "\(secret) reached the HAR file")
        }
        let check = """
        import json, sys
        log = json.load(open(sys.argv[1]))["log"]
        assert log["version"] == "1.2", log["version"]
        assert isinstance(log["creator"]["name"], str) and isinstance(log["creator"]["version"], str)
        entries = log["entries"]
        for e in entries:
            for k in ("startedDateTime", "time", "request", "response", "cache", "timings"): assert k in e, k
            assert e["startedDateTime"].endswith("Z") and "T" in e["startedDateTime"]
            q = e["request"]
            for k in ("method", "url", "httpVersion", "headers", "queryString", "cookies", "headersSize", "bodySize"): assert k in q, k
            r = e["response"]
            for k in ("status", "statusText", "httpVersion", "headers", "cookies", "content", "redirectURL", "headersSize", "bodySize"): assert k in r, k
            for k in ("size", "mimeType"): assert k in r["content"], k
            for k in ("send", "wait", "receive"): assert e["timings"][k] >= 0, k
            assert e["time"] >= 0
        print(len(entries), entries[0]["request"]["queryString"][0]["value"], entries[2]["response"]["redirectURL"],
              entries[2]["response"]["cookies"][0]["name"], entries[3]["request"]["cookies"][0]["name"],
              entries[4]["response"]["content"]["size"], len(entries[4]["response"]["content"]["text"]),
              entries[4]["response"]["content"].get("encoding"), entries[5]["response"]["status"])
        """
        let script = FileManager.default.temporaryDirectory.appendingPathComponent("courier-har-\(UUID().uuidString).py")
        defer { try? FileManager.default.removeItem(at: script) }
        try check.write(to: script, atomically: true, encoding: .utf8)
        let (status, output) = try await Self.shell("\(Self.python!) \(script.path) \(file.path)")
        #expect(status == 0, "\(output)")
        let redirect = URL(string: "/status/200", relativeTo: server.baseURL)!.absoluteURL.absoluteString
        #expect(output.trimmingCharacters(in: .whitespacesAndNewlines) == "6 redacted \(redirect) sid sid 1000 136 base64 404")
    }
}
