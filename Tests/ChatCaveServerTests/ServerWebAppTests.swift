import CourierTestServer
import Foundation
import Testing

@Suite("ChatCave server: the built-in web app", .ownThread)
struct ServerWebAppTests {
    /// What Chromium sends when it navigates to a page.
    static let browserAccept = "text/html,application/xhtml+xml,application/xml;q=0.9,image/avif,image/webp,*/*;q=0.8"
    static let policy = "default-src 'self'; frame-ancestors 'none'"

    @Test("GET / from a browser is the app's page; JSON clients still get the API description; both vary with Accept")
    func rootByAccept() throws {
        let fixture = try ServerFixture()
        let page = try fixture.send("GET", "/", headers: [("Accept", Self.browserAccept)])
        #expect(page.status == 200)
        #expect(page.header("Content-Type") == "text/html; charset=utf-8")
        #expect(page.text.hasPrefix("<!doctype html>"))
        #expect(page.text.contains(#"<script type="module" src="/app.js"></script>"#))
        #expect(page.text.contains(#"<link rel="stylesheet" href="/app.css">"#))
        #expect(page.header("Vary") == "Accept")
        for accept in ["application/json", "*/*", "application/json, text/html"] {
            let description = try fixture.send("GET", "/", headers: [("Accept", accept)])
            #expect(description.status == 200)
            #expect(description.header("Content-Type")?.hasPrefix("application/json") == true, "Accept: \(accept)")
            #expect(try description.object()["name"] as? String == "ChatCave")
            #expect(description.header("Vary") == "Accept")
        }
    }

    @Test("the page, its files and the API's answers carry the security policy and nosniff")
    func securityHeaders() throws {
        let fixture = try ServerFixture()
        let responses = [
            try fixture.send("GET", "/", headers: [("Accept", "text/html")]),
            try fixture.send("GET", "/app.js"),
            try fixture.send("GET", "/app.css"),
            try fixture.send("GET", "/favicon.svg"),
            try fixture.send("GET", "/"),
            try fixture.send("GET", "/rooms"),          // 401
            try fixture.send("GET", "/nothing/here"),   // 404
        ]
        for response in responses {
            #expect(response.header("Content-Security-Policy") == Self.policy, "\(response)")
            #expect(response.header("X-Content-Type-Options") == "nosniff", "\(response)")
            #expect(response.header("Referrer-Policy") == "no-referrer", "\(response)")
            #expect(response.header("Set-Cookie") == nil)
        }
        #expect(responses[5].status == 401)
        #expect(responses[5].header("WWW-Authenticate") == #"Basic realm="ChatCave Server""#)
    }

    @Test("the files: their content types, open to requests without credentials, HEAD without a body, other methods 405")
    func assetTypes() throws {
        let fixture = try ServerFixture()
        let expected = ["/app.js": "text/javascript; charset=utf-8", "/app.css": "text/css; charset=utf-8",
                        "/favicon.svg": "image/svg+xml"]
        for (path, type) in expected.sorted(by: { $0.key < $1.key }) {
            let response = try fixture.send("GET", path, headers: [("Accept", "*/*")])
            #expect(response.status == 200, "\(path)")
            #expect(response.header("Content-Type") == type)
            #expect(!response.body.isEmpty)
            #expect(response.header("Content-Length") == String(response.body.count))
            let head = try fixture.send("HEAD", path)
            #expect(head.status == 200)
            #expect(head.body.isEmpty)
            #expect(head.header("ETag") == response.header("ETag"))
            let post = try fixture.send("POST", path)
            #expect(post.status == 405)
            #expect(post.header("Allow") == "GET, HEAD")
        }
        #expect(try fixture.send("GET", "/app.jsx").status == 404)
        #expect(try fixture.send("GET", "/app.js/more").status == 404)
    }

    @Test("ETag and Cache-Control on every file; If-None-Match answers 304 with no body, weak tags and lists included")
    func conditionalRequests() throws {
        let fixture = try ServerFixture()
        var tags: Set<String> = []
        for (path, accept) in [("/", "text/html"), ("/app.js", "*/*"), ("/app.css", "text/css"), ("/favicon.svg", "*/*")] {
            let first = try fixture.send("GET", path, headers: [("Accept", accept)])
            let etag = try #require(first.header("ETag"))
            tags.insert(etag)
            #expect(etag.hasPrefix("\"") && etag.hasSuffix("\"") && etag.count == 18, "\(path): \(etag)")
            #expect(first.header("Cache-Control") == "no-cache")
            #expect(try fixture.send("GET", path, headers: [("Accept", accept)]).header("ETag") == etag)
            for condition in [etag, "W/\(etag)", "\"other\", \(etag)", "*"] {
                let cached = try fixture.send("GET", path, headers: [("Accept", accept), ("If-None-Match", condition)])
                #expect(cached.status == 304, "\(path) If-None-Match: \(condition)")
                #expect(cached.body.isEmpty)
                #expect(cached.header("ETag") == etag)
                #expect(cached.header("Cache-Control") == "no-cache")
                #expect(cached.header("Content-Security-Policy") == Self.policy)
            }
            let changed = try fixture.send("GET", path, headers: [("Accept", accept), ("If-None-Match", "\"0000000000000000\"")])
            #expect(changed.status == 200)
            #expect(changed.body == first.body)
        }
        #expect(tags.count == 4)
        let json = try fixture.send("GET", "/", headers: [("If-None-Match", "*")])
        #expect(json.status == 200)
        #expect(json.header("ETag") == nil)
    }

    @Test("the page loads nothing from elsewhere and holds no inline script or style; the script never parses HTML")
    func selfContained() throws {
        let fixture = try ServerFixture()
        let page = try fixture.send("GET", "/", headers: [("Accept", "text/html")]).text
        let style = try fixture.send("GET", "/app.css").text
        let script = try fixture.send("GET", "/app.js").text
        for text in [page, style, script] {
            #expect(!text.contains("http://") && !text.contains("https://") && !text.contains("//cdn"))
            #expect(!text.contains("@import") && !text.contains("url("))
        }
        #expect(page.components(separatedBy: "<script").count == 2)
        #expect(!page.contains("<style") && !page.contains("style="))
        #expect(page.range(of: #"\son[a-z]+\s*="#, options: .regularExpression) == nil)
        for sink in ["innerHTML", "outerHTML", "insertAdjacentHTML", "document.write", "eval(", "new Function"] {
            #expect(!script.contains(sink), "app.js uses \(sink)")
        }
        #expect(script.contains("sessionStorage") && !script.contains("localStorage") && !script.contains("document.cookie"))
        #expect(script.contains("'X-Magic-Auth'") && script.contains("credentials: 'omit'"))
    }

    @Test("the app's own requests pass the cross-site check (same origin); another origin's do not")
    func sameOriginRequests() throws {
        let fixture = try ServerFixture()
        let browser = [("Origin", "http://127.0.0.1"), ("Sec-Fetch-Site", "same-origin"), ("Sec-Fetch-Mode", "cors")]
        let created = try fixture.send("POST", "/users", headers: browser + [("Content-Type", "application/json")],
                                       body: Array(#"{"user":{"name":"alice","password":"pw"}}"#.utf8))
        #expect(created.status == 201)
        let key = try #require(try created.object()["apiKey"] as? String)
        let room = try fixture.send("POST", "/rooms", headers: browser + ServerFixture.magic(key) + [("Content-Type", "application/json")],
                                    body: Array(#"{"room":{"name":"Lobby"}}"#.utf8))
        #expect(room.status == 201)
        let foreign = [("Origin", "http://evil.example"), ("Sec-Fetch-Site", "cross-site")]
        let refused = try fixture.send("POST", "/rooms", headers: foreign + ServerFixture.magic(key) + [("Content-Type", "application/json")],
                                       body: Array(#"{"room":{"name":"Other"}}"#.utf8))
        #expect(refused.status == 403)
    }
}
