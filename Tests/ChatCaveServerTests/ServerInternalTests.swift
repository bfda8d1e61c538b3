@testable import ChatCaveServer
import CourierTestServer
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

    @Test("M4 failure counts: a name is locked out from any address, case variants share its count, memory stays bounded")
    func throttle() throws {
        let throttle = LoginThrottle(limits: .init(failuresAllowed: 2, lockout: .seconds(30), trackedKeys: 100))
        let first = LoginThrottle.peerKey(addressBytes: [10, 0, 0, 1])
        let second = LoginThrottle.peerKey(addressBytes: [10, 0, 0, 2])
        throttle.recordFailure([first, LoginThrottle.nameKey("alice")])
        throttle.recordFailure([second, LoginThrottle.nameKey("ALICE")])
        #expect(throws: APIError.self) { try throttle.check([LoginThrottle.peerKey(addressBytes: [10, 0, 0, 3]), LoginThrottle.nameKey("Alice")]) }
        try throttle.check([first, LoginThrottle.nameKey("bob")])
        for index in 0..<10_000 {
            throttle.recordFailure([LoginThrottle.nameKey("user\(index)"), LoginThrottle.nameKey("user\(index)")])
        }
        #expect(throttle.trackedCount <= 100)
        #expect(throws: APIError.tooManyAttempts(retryAfter: 30)) { try throttle.check([LoginThrottle.nameKey("user9999")]) }
        let sixtyFour = LoginThrottle.peerKey(addressBytes: [0x20, 0x01, 0x0d, 0xb8, 0, 0, 0, 1] + Array(repeating: 7, count: 8))
        #expect(sixtyFour == LoginThrottle.peerKey(addressBytes: [0x20, 0x01, 0x0d, 0xb8, 0, 0, 0, 1] + Array(repeating: 9, count: 8)))
    }

    @Test("timestamps: ISO 8601 in UTC with milliseconds")
    func timestamps() {
        #expect(ServerTimestamp.format(milliseconds: 0) == "1970-01-01T00:00:00.000Z")
        #expect(ServerTimestamp.format(milliseconds: 1_395_426_153_123) == "2014-03-21T18:22:33.123Z")
        #expect(ServerTimestamp.format(milliseconds: 951_782_400_000) == "2000-02-29T00:00:00.000Z")
        #expect(ServerTimestamp.format(milliseconds: -1) == "1969-12-31T23:59:59.999Z")
    }
}
