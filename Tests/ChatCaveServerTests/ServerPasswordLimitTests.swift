import ChatCaveServer
import CourierTestServer
import Foundation
import Testing

@Suite("ChatCave server: password hashing limits and throttling", .ownThread)
struct ServerPasswordLimitTests {
    @Test("M4 64 parallel wrong-Basic requests: at most N hashes at once, the excess gets 429/503, and GET / answers meanwhile")
    func parallelGuessing() throws {
        let limits = ChatCaveServer.PasswordLimits()
        let fixture = try ServerFixture(passwordIterations: 400_000, passwordLimits: limits)  // about 0.25 s a hash
        _ = try fixture.signUp("alice", password: "right")
        var clients: [RawHTTP] = []
        for index in 0..<64 {
            let client = try RawHTTP(port: fixture.server.port, timeout: 30)
            let credential = Data("alice:wrong-\(index)".utf8).base64EncodedString()
            try client.write(Array("GET /rooms HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Basic \(credential)\r\n\r\n".utf8))
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

    @Test("M4 a locked-out address recovers after its lock-out, which doubles; a right password after a few failures works")
    func lockoutAndRecovery() throws {
        let limits = ChatCaveServer.PasswordLimits(failuresAllowed: 3, lockout: .milliseconds(500), maxLockout: .seconds(4))
        let fixture = try ServerFixture(passwordLimits: limits)
        _ = try fixture.signUp("alice", password: "right")
        let right = ServerFixture.basic("alice", "right")
        for attempt in 0..<2 {
            #expect(try fixture.send("GET", "/rooms", headers: ServerFixture.basic("alice", "wrong\(attempt)")).status == 401)
        }
        #expect(try fixture.send("GET", "/rooms", headers: right).status == 200, "2 failures are within the limit of 3")
        #expect(try fixture.send("GET", "/rooms", headers: ServerFixture.basic("bob", "guess")).status == 401)
        let locked = try fixture.send("GET", "/rooms", headers: right)
        #expect(locked.status == 429, "the address has 3 failures: even a right (remembered) password waits")
        #expect(locked.header("Retry-After") == "1")
        let signIn = try fixture.send("PUT", "/account", form: "user%5Bname%5D=alice&user%5Bpassword%5D=right")
        #expect(signIn.status == 429, "sign-in is throttled the same way")
        Thread.sleep(forTimeInterval: 0.6)
        #expect(try fixture.send("GET", "/rooms", headers: ServerFixture.basic("alice", "wrong")).status == 401)
        Thread.sleep(forTimeInterval: 0.6)
        #expect(try fixture.send("GET", "/rooms", headers: right).status == 429, "the 4th failure locks for 1 s")
        Thread.sleep(forTimeInterval: 0.6)
        #expect(try fixture.send("GET", "/rooms", headers: right).status == 200)
        #expect(try fixture.send("GET", "/rooms", headers: ServerFixture.magic(try fixture.signUp("carol").key)).status == 200,
                "API keys are never throttled")
    }
}
