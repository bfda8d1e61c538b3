import CourierTestServer
import Foundation
import Testing

@Suite("ChatCave server: authentication", .ownThread)
struct ServerAuthenticationTests {
    @Test("a request without credentials gets 401, an empty body and the exact realm", arguments: StoreKind.allCases)
    func challenge(store: StoreKind) throws {
        let fixture = try ServerFixture(store: store)
        for (method, target) in [("GET", "/rooms"), ("GET", "/users"), ("POST", "/rooms"), ("DELETE", "/account"),
                                 ("GET", "/rooms/x/messages")] {
            let response = try fixture.send(method, target)
            #expect(response.status == 401, "\(method) \(target)")
            #expect(response.body.isEmpty)
            #expect(response.header("WWW-Authenticate") == #"Basic realm="ChatCave Server""#)
        }
    }

    @Test("X-Magic-Auth with the key from sign-up authenticates; a wrong key does not", arguments: StoreKind.allCases)
    func apiKey(store: StoreKind) throws {
        let fixture = try ServerFixture(store: store)
        let alice = try fixture.signUp("alice")
        #expect(try fixture.send("GET", "/rooms", headers: ServerFixture.magic(alice.key)).status == 200)
        #expect(try fixture.send("GET", "/rooms", headers: ServerFixture.magic("not-a-key")).status == 401)
    }

    @Test("Basic credentials authenticate, repeatedly; a wrong password or name gets 401", arguments: StoreKind.allCases)
    func basic(store: StoreKind) throws {
        let fixture = try ServerFixture(store: store)
        _ = try fixture.signUp("alice", password: "s3cret")
        for _ in 0..<3 {
            #expect(try fixture.send("GET", "/rooms", headers: ServerFixture.basic("alice", "s3cret")).status == 200)
        }
        let wrong = try fixture.send("GET", "/rooms", headers: ServerFixture.basic("alice", "nope"))
        #expect(wrong.status == 401)
        #expect(wrong.header("WWW-Authenticate") == #"Basic realm="ChatCave Server""#)
        #expect(try fixture.send("GET", "/rooms", headers: ServerFixture.basic("mallory", "s3cret")).status == 401)
        #expect(try fixture.send("GET", "/rooms", headers: [("Authorization", "Basic %%%not-base64")]).status == 401)
        #expect(try fixture.send("GET", "/rooms", headers: [("Authorization", "Bearer abc")]).status == 401)
    }

    @Test("the open routes need no credentials: GET /, sign-up and sign-in", arguments: StoreKind.allCases)
    func openRoutes(store: StoreKind) throws {
        let fixture = try ServerFixture(store: store)
        let root = try fixture.send("GET", "/")
        #expect(root.status == 200)
        #expect(try root.object()["name"] as? String == "ChatCave")
        let page = try fixture.send("GET", "/", headers: [("Accept", "text/html")])
        #expect(page.header("Content-Type")?.hasPrefix("text/html") == true)
        _ = try fixture.signUp("alice", password: "pw")
        let signIn = try fixture.send("PUT", "/account", form: "user%5Bname%5D=alice&user%5Bpassword%5D=pw")
        #expect(signIn.status == 201)
        #expect(try signIn.object()["apiKey"] as? String != nil)
    }

    @Test("sign-in: 201 with the user's key, 401 with the contract's text, 406 for an empty field", arguments: StoreKind.allCases)
    func signIn(store: StoreKind) throws {
        let fixture = try ServerFixture(store: store)
        let alice = try fixture.signUp("alice", password: "pw")
        let good = try fixture.send("PUT", "/account", json: #"{"user": {"name": "alice", "password": "pw"}}"#)
        #expect(good.status == 201)
        #expect(try good.object()["id"] as? String == alice.id)
        #expect(try good.object()["apiKey"] as? String == alice.key)
        for body in ["user%5Bname%5D=alice&user%5Bpassword%5D=wrong", "user%5Bname%5D=nobody&user%5Bpassword%5D=pw"] {
            let refused = try fixture.send("PUT", "/account", form: body)
            #expect(refused.status == 401)
            #expect(refused.errorText == "Invalid username/password combination")
        }
        #expect(try fixture.send("PUT", "/account", form: "user%5Bname%5D=alice&user%5Bpassword%5D=").status == 406)
        #expect(try fixture.send("PUT", "/account", form: "user%5Bpassword%5D=pw").status == 406)
    }

    @Test("sign-out retires the key: 200 {}, then the old key gets 401 and sign-in returns a new one", arguments: StoreKind.allCases)
    func signOut(store: StoreKind) throws {
        let fixture = try ServerFixture(store: store)
        let alice = try fixture.signUp("alice", password: "pw")
        let out = try fixture.send("DELETE", "/account", headers: ServerFixture.magic(alice.key))
        #expect(out.status == 200)
        #expect(try out.object().isEmpty)
        #expect(try fixture.send("GET", "/rooms", headers: ServerFixture.magic(alice.key)).status == 401)
        let again = try fixture.send("PUT", "/account", form: "user%5Bname%5D=alice&user%5Bpassword%5D=pw")
        let key = try #require(try again.object()["apiKey"] as? String)
        #expect(key != alice.key)
        #expect(try fixture.send("GET", "/rooms", headers: ServerFixture.magic(key)).status == 200)
    }

    @Test("revoking a key in-process makes it fail; Basic still works", arguments: StoreKind.allCases)
    func revocation(store: StoreKind) throws {
        let fixture = try ServerFixture(store: store)
        let bob = try fixture.signUp("bob", password: "pw")
        #expect(fixture.server.revokeAPIKey(forUserNamed: "bob"))
        #expect(!fixture.server.revokeAPIKey(forUserNamed: "nobody"))
        #expect(try fixture.send("GET", "/rooms", headers: ServerFixture.magic(bob.key)).status == 401)
        #expect(try fixture.send("GET", "/rooms", headers: ServerFixture.basic("bob", "pw")).status == 200)
        #expect(fixture.server.responsesByStatus[401] == 1)
    }

    @Test("the key of a user is shown only to that user", arguments: StoreKind.allCases)
    func keysStayPrivate(store: StoreKind) throws {
        let fixture = try ServerFixture(store: store)
        let alice = try fixture.signUp("alice")
        let bob = try fixture.signUp("bob")
        let users = try fixture.send("GET", "/users", headers: ServerFixture.magic(alice.key)).array()
        #expect(users.map { $0["name"] as? String } == ["alice", "bob"])
        #expect(users[0]["apiKey"] as? String == alice.key)
        #expect(users[1]["apiKey"] == nil)
        let other = try fixture.send("GET", "/users/\(bob.id)", headers: ServerFixture.magic(alice.key))
        #expect(other.status == 200)
        #expect(try other.object()["apiKey"] == nil)
        #expect(try other.object()["name"] as? String == "bob")
        #expect(try fixture.send("GET", "/users/nobody", headers: ServerFixture.magic(alice.key)).status == 404)
    }

    @Test("L12 a form POST with Basic credentials and Sec-Fetch-Site: cross-site gets 403; the same without those fields still works", arguments: StoreKind.allCases)
    func crossSiteRequests(store: StoreKind) throws {
        let fixture = try ServerFixture(store: store)
        _ = try fixture.signUp("alice", password: "pw")
        let basic = ServerFixture.basic("alice", "pw")
        let browserFields: [[(String, String)]] = [
            [("Sec-Fetch-Site", "cross-site")], [("Sec-Fetch-Site", "same-site")], [("Origin", "http://evil.example")],
            [("Origin", "null")], [("Sec-Fetch-Site", "same-origin"), ("Origin", "http://127.0.0.1:1")],
        ]
        for fields in browserFields {
            let response = try fixture.send("POST", "/rooms", auth: basic + fields, form: "room%5Bname%5D=Forged")
            #expect(response.status == 403, "\(fields)")
            #expect(response.errorText?.contains("may not change anything") == true, "\(response)")
        }
        let signUp = try fixture.send("POST", "/users", auth: [("Sec-Fetch-Site", "cross-site")], form: "user%5Bname%5D=eve&user%5Bpassword%5D=pw")
        #expect(signUp.status == 403, "the open routes too")
        #expect(try fixture.send("GET", "/rooms", headers: basic + [("Sec-Fetch-Site", "cross-site")]).array().isEmpty,
                "reads are not refused, and nothing was created")
        #expect(try fixture.send("POST", "/rooms", auth: basic, form: "room%5Bname%5D=Cli").status == 201)
        let sameOrigin = [("Sec-Fetch-Site", "same-origin"), ("Origin", "http://127.0.0.1")]
        #expect(try fixture.send("POST", "/rooms", auth: basic + sameOrigin, form: "room%5Bname%5D=Page").status == 201)
    }
}
