import ChatCaveServer
import CourierTestServer
import CourierTestSupport
import Foundation
import Testing

@Suite("ChatCave server: bodies and malformed input", .ownThread)
struct ServerInputTests {
    @Test("form bodies: bracketed keys, percent escapes and + as a space", arguments: StoreKind.allCases)
    func formBodies(store: StoreKind) throws {
        let fixture = try ServerFixture(store: store)
        let response = try fixture.send("POST", "/users", form: "user%5Bname%5D=J%C3%BCrgen+M&user[password]=p%26w%3D")
        #expect(response.status == 201)
        #expect(try response.object()["name"] as? String == "Jürgen M")
        let signIn = try fixture.send("PUT", "/account", form: "user%5Bname%5D=J%C3%BCrgen%20M&user%5Bpassword%5D=p%26w%3D")
        #expect(signIn.status == 201)
    }

    @Test("JSON bodies of the same nested shape, with or without a Content-Type", arguments: StoreKind.allCases)
    func jsonBodies(store: StoreKind) throws {
        let fixture = try ServerFixture(store: store)
        #expect(try fixture.send("POST", "/users", json: #"{"user": {"name": "alice", "password": "pw"}}"#).status == 201)
        let untyped = try fixture.send("POST", "/users", body: Array(#"{"user":{"name":"bob","password":"pw"}}"#.utf8))
        #expect(untyped.status == 201)
        #expect(try untyped.object()["name"] as? String == "bob")
    }

    @Test("malformed bodies get a JSON 400 and the server goes on serving", arguments: StoreKind.allCases)
    func malformedBodies(store: StoreKind) throws {
        let fixture = try ServerFixture(store: store)
        let cases: [(String, [(String, String)], String)] = [
            ("not JSON", [("Content-Type", "application/json")], #"{"user": {"name": "#),
            ("a JSON array", [("Content-Type", "application/json")], "[1, 2]"),
            ("a bad escape", [("Content-Type", "application/x-www-form-urlencoded")], "user%5Bname%5D=%G1&user%5Bpassword%5D=x"),
            ("a cut escape", [("Content-Type", "application/x-www-form-urlencoded")], "user%5Bname%5D=abc%"),
            ("bad UTF-8", [("Content-Type", "application/x-www-form-urlencoded")], "user%5Bname%5D=%FF%FE&user%5Bpassword%5D=x"),
            ("another type", [("Content-Type", "text/plain")], "hello"),
        ]
        for (what, headers, body) in cases {
            let response = try fixture.send("POST", "/users", headers: headers, body: Array(body.utf8))
            #expect(response.status == 400, "\(what)")
            #expect(response.errorText != nil, "\(what): \(response)")
        }
        #expect(try fixture.send("GET", "/rooms/%ZZ").status == 400)
        _ = try fixture.signUp("alice")
    }

    @Test("M5 message text with C0, C1, bidi or other format characters gets 406; newlines, tabs and emoji joiners pass", arguments: StoreKind.allCases)
    func messageControlCharacters(store: StoreKind) throws {
        let fixture = try ServerFixture(store: store)
        let (alice, room) = try fixture.signUpInNewRoom("alice", room: "Lobby")
        let refused = ["hello\u{1B}]0;owned\u{07}", "\u{1B}[2J", "fake\rline", "bell\u{07}", "nul\u{00}", "del\u{7F}",
                       "next\u{85}line", "csi\u{9B}2J", "abc\u{202E}cba", "iso\u{2066}late", "mark\u{200F}", "zero\u{200B}width",
                       "bom\u{FEFF}", "tag\u{E0041}", "line\u{2028}sep"]
        for text in refused {
            let response = try fixture.send("POST", "/rooms/\(room)/messages", auth: ServerFixture.magic(alice.key),
                                            form: "message%5Btext%5D=" + ServerFixture.formValue(text))
            #expect(response.status == 406, "\(text.unicodeScalars.map { String($0.value, radix: 16) })")
            #expect(response.errorText?.contains("control or format characters") == true, "\(response)")
        }
        let accepted = ["two\nlines\tand a tab", "👩\u{200D}💻 at work"]
        for text in accepted {
            #expect(try fixture.post(ServerFixture.formValue(text), to: room, key: alice.key).isEmpty == false)
        }
        let texts = try fixture.send("GET", "/rooms/\(room)/messages", headers: ServerFixture.magic(alice.key)).array().compactMap { $0["text"] as? String }
        #expect(texts == accepted)
    }

    @Test("M5 user and room names with control, bidi or format characters get 406", arguments: StoreKind.allCases)
    func nameControlCharacters(store: StoreKind) throws {
        let fixture = try ServerFixture(store: store)
        let alice = try fixture.signUp("alice")
        for name in ["al\u{202E}ecila", "a\u{1B}[31mb", "tab\tname", "c1\u{90}", "lr\u{200E}m", "word\u{2060}joiner", "bob\u{200B}"] {
            let user = try fixture.send("POST", "/users", form: "user%5Bname%5D=\(ServerFixture.formValue(name))&user%5Bpassword%5D=pw")
            #expect(user.status == 406, "\(name.unicodeScalars.map { String($0.value, radix: 16) })")
            #expect(user.errorText?.contains("User name must not contain control or format characters") == true, "\(user)")
            let room = try fixture.send("POST", "/rooms", auth: ServerFixture.magic(alice.key), form: "room%5Bname%5D=" + ServerFixture.formValue(name))
            #expect(room.status == 406)
            #expect(room.errorText?.contains("Room name must not contain control or format characters") == true, "\(room)")
        }
        #expect(try fixture.send("GET", "/users", headers: ServerFixture.magic(alice.key)).array().count == 1)
        #expect(try fixture.send("GET", "/rooms", headers: ServerFixture.magic(alice.key)).array().isEmpty)
    }

    @Test("I9 names are NFKC-normalised and unique case-insensitively: Alice after alice is a duplicate", arguments: StoreKind.allCases)
    func nameNormalisation(store: StoreKind) throws {
        let fixture = try ServerFixture(store: store)
        let alice = try fixture.signUp("alice", password: "pw")
        for variant in ["Alice", "ALICE", "ａｌｉｃｅ"] {
            let duplicate = try fixture.send("POST", "/users", form: "user%5Bname%5D=\(ServerFixture.formValue(variant))&user%5Bpassword%5D=pw")
            #expect(duplicate.status == 406, "\(variant)")
            #expect(duplicate.errorText?.contains("already exists") == true, "\(duplicate)")
        }
        let ligature = try fixture.send("POST", "/users", form: "user%5Bname%5D=\(ServerFixture.formValue("ﬁona"))&user%5Bpassword%5D=pw")
        #expect(ligature.status == 201)
        #expect(try ligature.object()["name"] as? String == "fiona")
        let signIn = try fixture.send("PUT", "/account", form: "user%5Bname%5D=Alice&user%5Bpassword%5D=pw")
        #expect(signIn.status == 201, "the name is found whatever its case")
        #expect(try signIn.object()["id"] as? String == alice.id)
        _ = try fixture.createRoom("Lobby", key: alice.key)
        for variant in ["lobby", "LOBBY", "Ｌｏｂｂｙ"] {
            let duplicate = try fixture.send("POST", "/rooms", auth: ServerFixture.magic(alice.key), form: "room%5Bname%5D=" + ServerFixture.formValue(variant))
            #expect(duplicate.status == 406, "\(variant)")
            #expect(duplicate.errorText?.contains("already exists") == true, "\(duplicate)")
        }
        #expect(try fixture.send("GET", "/users", headers: ServerFixture.magic(alice.key)).array().map { $0["name"] as? String } == ["alice", "fiona"])
    }

    @Test("a malformed request line gets 400, an oversized body 413, and other clients are still served", arguments: StoreKind.allCases)
    func malformedRequests(store: StoreKind) throws {
        let fixture = try ServerFixture(store: store)
        let broken = try RawHTTPClient(port: fixture.server.port)
        try broken.send(Array("GARBAGE\r\n\r\n".utf8))
        let badRequest = try broken.readResponse()
        #expect(badRequest.status == 400)
        #expect(badRequest.errorText != nil, "every error body is JSON: \(badRequest)")
        let huge = try RawHTTPClient(port: fixture.server.port)
        try huge.send(Array("POST /users HTTP/1.1\r\nHost: x\r\nContent-Length: 5000000\r\n\r\n".utf8))
        let tooLarge = try huge.readResponse()
        #expect(tooLarge.status == 413)
        #expect(tooLarge.errorText != nil, "every error body is JSON: \(tooLarge)")
        let oversized = try RawHTTPClient(port: fixture.server.port)
        try? oversized.send(Array("GET / HTTP/1.1\r\nHost: x\r\nX-Padding: \(String(repeating: "a", count: 70_000))\r\n\r\n".utf8))
        let headTooLarge = try oversized.readResponse()
        #expect(headTooLarge.status == 431)
        #expect(headTooLarge.errorText != nil, "every error body is JSON: \(headTooLarge)")
        #expect(try fixture.send("GET", "/").status == 200)
    }

    @Test("a client that sends half a head and stalls (slowloris) is cut off; others are served meanwhile")
    func slowloris() throws {
        let server = try ChatCaveServer(port: 0, configuration: .init(passwordIterations: 1_000, headerTimeout: .milliseconds(300)))
        defer { server.shutdown() }
        let slow = try RawHTTPClient(port: server.port, timeout: 10)
        try slow.send(Array("GET /rooms HTTP/1.1\r\nHost: x\r\n".utf8))
        #expect(try RawHTTPClient(port: server.port).exchange("GET", "/").status == 200)
        let started = ContinuousClock.now
        #expect(slow.waitForClose())
        #expect(ContinuousClock.now - started < .seconds(20))
    }

    @Test("random bytes thrown at the server never crash it (fuzz)", arguments: StoreKind.allCases)
    func fuzz(store: StoreKind) throws {
        let fixture = try ServerFixture(store: store)
        let alice = try fixture.signUp("alice")
        var generator = SeededRandom(seed: 0xC0FFEE)
        let fragments = ["GET ", "POST ", "PUT ", "/rooms", "/users", "/account", "/messages", "?since=", "%", "%5B",
                         "[", "]", "{", "}", "\"", ":", "\r\n", "Content-Length: ", "Content-Type: application/json",
                         "X-Magic-Auth: \(alice.key)", "Authorization: Basic ", "=", "&", "\u{00}", "\u{FF}", " HTTP/1.1"]
        for round in 0..<60 {
            var bytes: [UInt8] = []
            if round % 2 == 0 {
                for _ in 0..<Int(generator.next() % 40) { bytes += Array(fragments[Int(generator.next() % UInt64(fragments.count))].utf8) }
            } else {
                for _ in 0..<Int(generator.next() % 300) { bytes.append(UInt8(truncatingIfNeeded: generator.next())) }
            }
            bytes += Array("\r\n\r\n".utf8)
            let client = try RawHTTPClient(port: fixture.server.port, timeout: 3)
            try? client.send(bytes)
            _ = try? client.readResponse()
        }
        // Well-formed requests with random bodies on every body-taking route.
        let room = try fixture.createRoom("Lobby", key: alice.key)
        for round in 0..<40 {
            let body = (0..<Int(generator.next() % 200)).map { _ in UInt8(truncatingIfNeeded: generator.next()) }
            let type = ["application/json", "application/x-www-form-urlencoded", "text/plain", ""][round % 4]
            let target = ["/users", "/rooms", "/rooms/\(room)/messages", "/account"][round % 4]
            let method = target == "/account" ? "PUT" : "POST"
            let response = try fixture.send(method, target, headers: ServerFixture.magic(alice.key) + (type.isEmpty ? [] : [("Content-Type", type)]), body: body)
            #expect([201, 400, 401, 406].contains(response.status), "\(response)")
        }
        #expect(try fixture.send("GET", "/rooms", headers: ServerFixture.magic(alice.key)).status == 200)
    }
}

