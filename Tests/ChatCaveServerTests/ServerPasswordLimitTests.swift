import ChatCaveServer
import CourierTestServer
import CourierTestSupport
import Foundation
import Testing

@Suite("ChatCave server: password hashing limits and throttling", .ownThread)
struct ServerPasswordLimitTests {
    @Test("M4 64 parallel wrong-Basic requests: at most N hashes at once, the excess gets 429/503, and GET / answers meanwhile")
    func parallelGuessing() throws {
        let limits = ChatCaveServer.PasswordLimits()
        let fixture = try ServerFixture(passwordIterations: 400_000, passwordLimits: limits)  // about 0.25 s a hash
        _ = try fixture.signUp("alice", password: "right")
        var clients: [RawHTTPClient] = []
        for index in 0..<64 {
            let client = try RawHTTPClient(port: fixture.server.port, timeout: 30)
            let credential = Data("alice:wrong-\(index)".utf8).base64EncodedString()
            try client.send(Array("GET /rooms HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Basic \(credential)\r\n\r\n".utf8))
            clients.append(client)
        }
        let started = ContinuousClock.now
        let root = try fixture.send("GET", "/")
        let rootTime = ContinuousClock.now - started
        var statuses: [Int: Int] = [:]
        for client in clients {
            let response = try client.readResponse()
            statuses[response.status, default: 0] += 1
            if [429, 503].contains(response.status) {
                #expect(Int(response.header("Retry-After") ?? "") ?? 0 >= 1, "\(response)")
                #expect(response.errorText != nil, "\(response)")
            }
        }
        #expect(root.status == 200)
        #expect(rootTime < .seconds(1), "GET / took \(rootTime) during the burst")
        #expect(fixture.server.peakConcurrentPasswordHashes <= limits.concurrentHashes)
        #expect(fixture.server.peakConcurrentPasswordHashes >= 1)
        #expect(Set(statuses.keys).isSubset(of: [401, 429, 503]), "\(statuses)")
        let hashed = statuses[401, default: 0]
        #expect(hashed <= limits.failuresAllowed + limits.concurrentHashes + limits.queuedHashes, "\(statuses)")
        #expect(statuses[429, default: 0] + statuses[503, default: 0] == 64 - hashed)
        print("M4 burst: \(statuses), GET / in \(rootTime), peak \(fixture.server.peakConcurrentPasswordHashes) hashes")
    }

    @Test("M4 a guesser at the user's own address locks the pair out, which recovers after its lock-out, which doubles; API keys are never throttled")
    func lockoutAndRecovery() throws {
        // Lock-outs of 1 s, then 2 s: each check that expects a lock-out lands at least 1 s before
        // its end, which leaves room for a slow machine (TSan); the checks after one err on the
        // safe side.
        let limits = ChatCaveServer.PasswordLimits(failuresAllowed: 3, lockout: .seconds(1), maxLockout: .seconds(8))
        let fixture = try ServerFixture(passwordLimits: limits)
        _ = try fixture.signUp("alice", password: "right")
        let right = ServerFixture.basic("alice", "right")
        for attempt in 0..<2 {
            #expect(try fixture.send("GET", "/rooms", headers: ServerFixture.basic("alice", "wrong\(attempt)")).status == 401)
        }
        #expect(try fixture.send("GET", "/rooms", headers: right).status == 200, "2 failures are within the limit of 3")
        #expect(try fixture.send("GET", "/rooms", headers: ServerFixture.basic("bob", "guess")).status == 401)
        for attempt in 0..<3 {
            #expect(try fixture.send("GET", "/rooms", headers: ServerFixture.basic("alice", "again\(attempt)")).status == 401)
        }
        let locked = try fixture.send("GET", "/rooms", headers: right)
        #expect(locked.status == 429, "3 failures for alice from this address: even a right (remembered) password waits")
        #expect(locked.header("Retry-After") == "1")
        let signIn = try fixture.signIn("alice", password: "right")
        #expect(signIn.status == 429, "sign-in is throttled the same way")
        #expect(try fixture.send("GET", "/rooms", headers: ServerFixture.basic("bob", "guess")).status == 401,
                "4 failures from the address are below its threshold: bob's pair is not locked")
        Thread.sleep(forTimeInterval: 1.2)
        #expect(try fixture.send("GET", "/rooms", headers: ServerFixture.basic("alice", "wrong")).status == 401)
        Thread.sleep(forTimeInterval: 1.0)
        #expect(try fixture.send("GET", "/rooms", headers: right).status == 429, "the 4th failure locks for 2 s")
        Thread.sleep(forTimeInterval: 1.4)
        #expect(try fixture.send("GET", "/rooms", headers: right).status == 200)
        #expect(try fixture.send("GET", "/rooms", headers: ServerFixture.magic(try fixture.signUp("carol").key)).status == 200,
                "API keys are never throttled")
    }

    @Test("M4 an attacker at another address failing 20 times for alice does not stop alice signing in from her address")
    func attackerElsewhere() throws {
        let fixture = try ServerFixture(passwordLimits: .init(lockout: .seconds(60)))
        _ = try fixture.signUp("alice", password: "right")
        var statuses: [Int: Int] = [:]
        for attempt in 0..<20 {
            statuses[try fixture.signIn("alice", password: "guess\(attempt)", from: "127.0.0.2").status, default: 0] += 1
        }
        #expect(statuses[401, default: 0] == 5, "\(statuses)")
        #expect(statuses[429, default: 0] == 15, "the attacker's own pair is locked out: \(statuses)")
        let signIn = try fixture.signIn("alice", password: "right")
        #expect(signIn.status == 201, "\(signIn)")
        #expect(try fixture.send("GET", "/rooms", headers: ServerFixture.basic("alice", "right")).status == 200)
    }

    @Test("M4 guesses for alice from many addresses lock her name for new addresses only: where she signed in before, she still can")
    func trustedAddress() throws {
        let limits = ChatCaveServer.PasswordLimits(failuresAllowed: 5, nameFailuresAllowed: 10, lockout: .seconds(60))
        let fixture = try ServerFixture(passwordLimits: limits)
        let alice = try fixture.signUp("alice", password: "right")
        #expect(try fixture.send("GET", "/rooms", headers: ServerFixture.basic("alice", "right")).status == 200)
        var statuses: [Int] = []
        for attempt in 0..<20 {
            statuses.append(try fixture.signIn("alice", password: "guess\(attempt)", from: "127.0.0.\(2 + attempt / 5)").status)
        }
        #expect(statuses == Array(repeating: 401, count: 10) + Array(repeating: 429, count: 10), "\(statuses)")
        #expect(try fixture.send("GET", "/rooms", headers: ServerFixture.basic("alice", "right")).status == 200,
                "a signed-in Basic client keeps working")
        let signIn = try fixture.signIn("alice", password: "right")
        #expect(signIn.status == 201, "\(signIn)")
        #expect(try signIn.object()["apiKey"] as? String == alice.key)
        let elsewhere = try fixture.signIn("alice", password: "right", from: "127.0.0.9")
        #expect(elsewhere.status == 429, "a new address waits while the name is locked: \(elsewhere)")
        #expect(Int(elsewhere.header("Retry-After") ?? "") ?? 0 > 1)
    }

    @Test("M4 sign-ups are limited per address: 429 with Retry-After; another address can still sign up")
    func signUpRate() throws {
        let fixture = try ServerFixture(passwordLimits: .init(signUpsPerMinute: 2))
        _ = try fixture.signUp("one")
        _ = try fixture.signUp("two")
        let third = try fixture.send("POST", "/users", form: "user%5Bname%5D=three&user%5Bpassword%5D=pw")
        #expect(third.status == 429)
        let retryAfter = Int(third.header("Retry-After") ?? "") ?? 0
        #expect((20...30).contains(retryAfter), "one sign-up comes back every 30 s: \(third)")
        #expect(third.errorText == "Too many sign-ups from this address; try again in \(retryAfter) s")
        #expect(try fixture.send("POST", "/users", form: "user%5Bname%5D=three&user%5Bpassword%5D=pw", from: "127.0.0.2").status == 201)
        #expect(try fixture.send("POST", "/users", form: "user%5Bname%5D=one&user%5Bpassword%5D=pw").status == 406,
                "a taken name is refused before it counts")
    }

    @Test("M4 during a sign-up flood that fills the hashing pool, an existing user still signs in")
    func signInDuringSignUpFlood() throws {
        let limits = ChatCaveServer.PasswordLimits(concurrentHashes: 2, queuedHashes: 4, reservedHashes: 2, signUpsPerMinute: 1_000)
        let fixture = try ServerFixture(passwordIterations: 400_000, passwordLimits: limits)  // about 0.25 s a hash
        _ = try fixture.signUp("alice", password: "right")
        var clients: [RawHTTPClient] = []
        for index in 0..<32 {
            let client = try RawHTTPClient(port: fixture.server.port, timeout: 30)
            let body = "user%5Bname%5D=flood\(index)&user%5Bpassword%5D=pw"
            try client.send(Array(("POST /users HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/x-www-form-urlencoded\r\n"
                                    + "Content-Length: \(body.utf8.count)\r\n\r\n" + body).utf8))
            clients.append(client)
        }
        let started = ContinuousClock.now
        let signIn = try fixture.signIn("alice", password: "right")
        let signInTime = ContinuousClock.now - started
        var statuses: [Int: Int] = [:]
        for client in clients { statuses[try client.readResponse().status, default: 0] += 1 }
        #expect(signIn.status == 201, "\(signIn)")
        #expect(statuses[503, default: 0] > 0, "the flood filled the pool: \(statuses)")
        #expect(Set(statuses.keys).isSubset(of: [201, 503]), "\(statuses)")
        print("M4 sign-up flood: \(statuses), sign-in answered \(signIn.status) in \(signInTime)")
    }
}
