@testable import ChatCaveServer
import CourierTestServer
import Foundation
import Synchronization
import Testing

@Suite("ChatCave server: internals", .ownThread)
struct ServerInternalTests {
    @Test("form decoding: escapes, + as space, first value wins, empty pairs skipped")
    func formDecoding() throws {
        let values = try FormDecoding.parse(Array("a=1&&b=x+y%2Bz&a=2&c&user%5Bname%5D=%C3%A9".utf8))
        #expect(values == ["a": "1", "b": "x y+z", "c": "", "user[name]": "é"])
        #expect(throws: APIError.self) { try FormDecoding.parse(Array("a=%4".utf8)) }
        #expect(throws: APIError.self) { try FormDecoding.parse(Array("a=%+1".utf8)) }
        #expect(throws: APIError.self) { try FormDecoding.parse([0xFF, 0x3D]) }
        let many = (0...FormDecoding.maxPairs).map { "k\($0)=v" }.joined(separator: "&")
        #expect(throws: APIError.self) { try FormDecoding.parse(Array(many.utf8)) }
    }

    @Test("routes: every path of the contract, HEAD as GET, trailing slashes, 404 and 405")
    func routes() throws {
        #expect(try Route.match(method: "GET", path: "/") == .root)
        #expect(try Route.match(method: "POST", path: "/users") == .signUp)
        #expect(try Route.match(method: "PUT", path: "/account/") == .signIn)
        #expect(try Route.match(method: "DELETE", path: "/account") == .signOut)
        #expect(try Route.match(method: "HEAD", path: "/rooms") == .listRooms)
        #expect(try Route.match(method: "PUT", path: "/rooms/r%201/chatters/u") == .join(roomID: "r 1", userID: "u"))
        #expect(try Route.match(method: "DELETE", path: "/rooms/r/chatters/u") == .leave(roomID: "r", userID: "u"))
        #expect(try Route.match(method: "POST", path: "/rooms/r/messages") == .postMessage(roomID: "r"))
        #expect(throws: APIError.notFound("No route for GET /rooms/r/x")) { try Route.match(method: "GET", path: "/rooms/r/x") }
        #expect(throws: APIError.self) { try Route.match(method: "POST", path: "/rooms/r") }
        #expect(throws: APIError.self) { try Route.match(method: "GET", path: "/rooms/%E0%A4") }
    }

    @Test("M4 failure counts: a pair locks out at its threshold, an address and a name only at their higher ones, memory stays bounded")
    func throttle() throws {
        let limits = ChatCaveServer.PasswordLimits(failuresAllowed: 2, addressFailuresAllowed: 4, nameFailuresAllowed: 6,
                                                   lockout: .seconds(30), trackedKeys: 100)
        var throttle = LoginThrottle(limits: limits)
        let start = ContinuousClock.now
        let alice = LoginThrottle.Attempt(name: "alice", addressBytes: [10, 0, 0, 1])
        throttle.recordFailure(alice, now: start)
        #expect(throttle.wait(for: alice, now: start) == .zero)
        throttle.recordFailure(LoginThrottle.Attempt(name: "ALICE", addressBytes: [10, 0, 0, 1]), now: start)
        #expect(throttle.wait(for: alice, now: start + .seconds(1)) == .seconds(29), "case variants share the pair's count")
        #expect(throttle.wait(for: alice, now: start + .seconds(30)) == .zero, "the lock-out ends")
        let sameAddress = LoginThrottle.Attempt(name: "bob", addressBytes: [10, 0, 0, 1])
        #expect(throttle.wait(for: sameAddress, now: start) == .zero, "2 failures from an address are below its threshold of 4")
        throttle.recordFailure(sameAddress, now: start)
        throttle.recordFailure(sameAddress, now: start)
        #expect(throttle.wait(for: LoginThrottle.Attempt(name: "carol", addressBytes: [10, 0, 0, 1]), now: start) == .seconds(30))
        for index in 2..<6 {
            throttle.recordFailure(LoginThrottle.Attempt(name: "alice", addressBytes: [10, 0, 0, UInt8(index)]), now: start)
        }
        let elsewhere = LoginThrottle.Attempt(name: "alice", addressBytes: [10, 0, 0, 9])
        #expect(throttle.wait(for: elsewhere, now: start) == .seconds(30), "6 failures for a name lock it from new addresses")
        #expect(throttle.trackedCount <= 100)
        for index in 0..<1_000 {
            throttle.recordFailure(LoginThrottle.Attempt(name: "user\(index)", addressBytes: [10, 1, 0, 1]),
                                   now: start + .milliseconds(index))
        }
        #expect(throttle.trackedCount <= 100)
        #expect(throttle.wait(for: LoginThrottle.Attempt(name: "user999", addressBytes: [10, 1, 0, 1]), now: start + .seconds(1)) > .zero,
                "the address's count, the newest, is kept")
    }

    @Test("M4 a pair that succeeded is held back only by its own count, and a success clears that count")
    func trustedPairs() {
        let limits = ChatCaveServer.PasswordLimits(failuresAllowed: 3, addressFailuresAllowed: 3, nameFailuresAllowed: 3,
                                                   lockout: .seconds(10), trackedKeys: 4)
        var throttle = LoginThrottle(limits: limits)
        let start = ContinuousClock.now
        let home = LoginThrottle.Attempt(name: "alice", addressBytes: [192, 0, 2, 1])
        let attacker = LoginThrottle.Attempt(name: "alice", addressBytes: [198, 51, 100, 7])
        throttle.recordSuccess(home, now: start)
        for _ in 0..<20 { throttle.recordFailure(attacker, now: start) }
        #expect(throttle.wait(for: attacker, now: start) > .zero)
        #expect(throttle.wait(for: home, now: start) == .zero, "the name's lock-out does not hold back a trusted pair")
        #expect(throttle.wait(for: LoginThrottle.Attempt(name: "alice", addressBytes: [192, 0, 2, 2]), now: start) > .zero,
                "an address where alice never signed in is held back by the name's count")
        for _ in 0..<3 { throttle.recordFailure(home, now: start + .seconds(1)) }  // newer than the attacker's counts
        #expect(throttle.wait(for: home, now: start + .seconds(1)) == .seconds(10), "a trusted pair still has its own threshold")
        throttle.recordSuccess(home, now: start + .seconds(2))
        #expect(throttle.wait(for: home, now: start + .seconds(2)) == .zero, "a success clears the pair's count")
        for index in 0..<10 {
            throttle.recordSuccess(LoginThrottle.Attempt(name: "u\(index)", addressBytes: [10, 0, 0, 1]), now: start + .seconds(20 + index))
        }
        #expect(throttle.trustedCount == 4)
    }

    @Test("M4 throttle keys: IPv4, an IPv6 /64, and an IPv4-mapped IPv6 address as its IPv4 address")
    func peerKeys() {
        let sixtyFour = PeerKey.of(addressBytes: [0x20, 0x01, 0x0d, 0xb8, 0, 0, 0, 1] + Array(repeating: 7, count: 8))
        #expect(sixtyFour == PeerKey.of(addressBytes: [0x20, 0x01, 0x0d, 0xb8, 0, 0, 0, 1] + Array(repeating: 9, count: 8)))
        let mapped: (UInt8) -> [UInt8] = { Array(repeating: 0, count: 10) + [0xFF, 0xFF, 203, 0, 113, $0] }
        #expect(PeerKey.of(addressBytes: mapped(5)) == PeerKey.of(addressBytes: [203, 0, 113, 5]))
        #expect(PeerKey.of(addressBytes: mapped(5)) != PeerKey.of(addressBytes: mapped(6)))
        #expect(PeerKey.of(addressBytes: mapped(5)) == "peer:203.0.113.5")
        let compatible = Array(repeating: 0, count: 12) + [203, 0, 113, 5] as [UInt8]
        #expect(PeerKey.of(addressBytes: compatible) == "peer:0.0.0.0.0.0.0.0", "only ::ffff:0:0/96 is mapped")
        #expect(PeerKey.of(addressBytes: nil) == "peer:unknown")
    }

    @Test("M4 sign-ups: a burst of N per address, then one every 60/N s; other addresses unaffected; memory bounded")
    func signUpThrottle() {
        var throttle = SignUpThrottle(perMinute: 3, trackedKeys: 10)
        let start = ContinuousClock.now
        for _ in 0..<3 { #expect(throttle.admit(peer: "peer:a", now: start) == .zero) }
        #expect(throttle.admit(peer: "peer:a", now: start) == .seconds(20))
        #expect(throttle.admit(peer: "peer:a", now: start + .seconds(15)) == .seconds(5), "a refused sign-up is not counted")
        #expect(throttle.admit(peer: "peer:b", now: start) == .zero)
        #expect(throttle.admit(peer: "peer:a", now: start + .seconds(20)) == .zero)
        #expect(throttle.admit(peer: "peer:a", now: start + .seconds(20)) > .zero)
        for index in 0..<1_000 { _ = throttle.admit(peer: "peer:\(index)", now: start + .seconds(30)) }
        #expect(throttle.trackedCount <= 10)
    }

    @Test("M4 the hashing pool keeps its reserved places for sign-in checks")
    func reservedHashes() throws {
        let pool = HashingPool(concurrency: 1, queueLimit: 1, reserved: 1)
        let release = DispatchSemaphore(value: 0)
        let running = DispatchSemaphore(value: 0)
        let finished = DispatchGroup()
        finished.enter()
        Thread {
            _ = try? pool.run(for: .other) { running.signal(); release.wait() }
            finished.leave()
        }.start()
        running.wait()
        #expect(throws: APIError.busy(retryAfter: 1)) { try pool.run(for: .other) {} }
        let signedIn = Mutex(false)
        finished.enter()
        Thread {
            signedIn.withLock { $0 = (try? pool.run(for: .signIn) { true }) ?? false }
            finished.leave()
        }.start()
        for _ in 0..<1_000 where pool.admittedCount < 2 { usleep(1_000) }
        #expect(pool.admittedCount == 2, "the sign-in check was admitted to the reserved place while the other hash runs")
        release.signal()
        #expect(finished.wait(timeout: .now() + 10) == .success)
        #expect(signedIn.withLock { $0 }, "the sign-in check ran")
        #expect(try HashingPool(concurrency: 1, queueLimit: 0, reserved: 5).run(for: .other) { 7 } == 7, "one place stays open")
    }

    @Test("a user holds at most 16 API keys: a sign-in that adds one beyond retires the oldest", arguments: StoreKind.allCases)
    func keyBound(kind: StoreKind) throws {
        let (store, directory) = try kind.makeStore()
        defer { directory.map { try? FileManager.default.removeItem(at: $0) } }
        let (user, first) = try store.addUser(name: "alice", passwordHash: "x")
        #expect(try store.signInKey(userID: user.id) == first, "a key known in memory is returned again")
        var keys = [first]
        for _ in 0..<20 {
            store.rememberedKeys.forgetAll()  // as after a restart
            keys.append(try store.signInKey(userID: user.id))
        }
        #expect(Set(keys).count == 21)
        #expect(try store.user(id: user.id)?.apiKeyDigests.count == StoredUser.maxAPIKeys)
        #expect(try keys.prefix(5).allSatisfy { try store.user(apiKey: $0) == nil })
        #expect(try keys.suffix(16).allSatisfy { try store.user(apiKey: $0)?.id == user.id })
        try store.revokeAPIKeys(keys.last, userID: user.id)
        #expect(try store.user(apiKey: keys[20]) == nil && store.user(apiKey: keys[19])?.id == user.id)
        #expect(try store.signInKey(userID: user.id) == keys[19], "the last key presented is returned")
        #expect(throws: APIError.self) { try store.signInKey(userID: "nobody") }
    }

    @Test("timestamps: ISO 8601 in UTC with milliseconds")
    func timestamps() {
        #expect(ServerTimestamp.format(milliseconds: 0) == "1970-01-01T00:00:00.000Z")
        #expect(ServerTimestamp.format(milliseconds: 1_395_426_153_123) == "2014-03-21T18:22:33.123Z")
        #expect(ServerTimestamp.format(milliseconds: 951_782_400_000) == "2000-02-29T00:00:00.000Z")
        #expect(ServerTimestamp.format(milliseconds: -1) == "1969-12-31T23:59:59.999Z")
    }
}
