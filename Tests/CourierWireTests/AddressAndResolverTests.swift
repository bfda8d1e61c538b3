import CourierTestServer
import Testing
import CourierWire

@Suite("SocketAddress and Resolver", .ownThread)
struct AddressAndResolverTests {
    @Test("numeric literals parse and print back")
    func literals() throws {
        let v4 = try #require(SocketAddress(ip: "10.1.2.3", port: 8080))
        #expect(v4.family == .ipv4)
        #expect(v4.addressBytes == [10, 1, 2, 3])
        #expect(v4.description == "10.1.2.3:8080")
        #expect(!v4.isLoopback)
        let v6 = try #require(SocketAddress(ip: "[::1]", port: 443))
        #expect(v6.family == .ipv6)
        #expect(v6.isLoopback)
        #expect(v6.description == "[::1]:443")
        #expect(v6.withPort(80).port == 80)
        #expect(SocketAddress(ip: "localhost", port: 80) == nil)
        #expect(SocketAddress(ip: "1.2.3.4", port: 65536) == nil)
        #expect(SocketAddress(ip: "1.2.3", port: 1) == nil)
        #expect(SocketAddress(ip: "", port: 1) == nil)
    }

    @Test("localhost resolves to loopback addresses off the loop, delivered on the loop")
    func localhost() throws {
        let loop = try EventLoop(name: "test-resolve")
        defer { loop.shutdown() }
        let results = Recorder<(Result<[SocketAddress], SocketError>, Bool)>()
        Resolver().resolve(host: "localhost", port: 8080, on: loop) { result in
            results.append((result, loop.inEventLoop))
        }
        #expect(results.wait(for: 1))
        let (result, onLoop) = try #require(results.values.first)
        #expect(onLoop)
        let addresses = try result.get()
        #expect(!addresses.isEmpty)
        #expect(addresses.allSatisfy { $0.isLoopback && $0.port == 8080 })
    }

    @Test("numeric hosts resolve without a lookup, both families")
    func numeric() throws {
        #expect(try Resolver.resolveBlocking(host: "127.0.0.1", port: 1) == [SocketAddress(ip: "127.0.0.1", port: 1)])
        #expect(try Resolver.resolveBlocking(host: "::1", port: 2).first?.family == .ipv6)
    }

    @Test("an unresolvable name fails with a resolver error")
    func failure() throws {
        let results = Recorder<Result<[SocketAddress], SocketError>>()
        Resolver().resolve(host: "", port: 80) { results.append($0) }
        #expect(results.wait(for: 1))
        let result = try #require(results.values.first)
        #expect(throws: SocketError.self) { try result.get() }
        if case .failure(let error) = result {
            #expect(error.isResolutionFailure)
            #expect(error.operation.hasPrefix("getaddrinfo"))
            #expect(!error.message.isEmpty)
        }
        #expect(throws: SocketError.self) { try Resolver.resolveBlocking(host: "x", port: -1) }
    }

    @Test("SocketError describes operation, text and number")
    func errorText() {
        let error = SocketError(operation: "connect", errno: 111)
        #expect(error.description == "connect failed: Connection refused (errno 111)")
        #expect(error.isConnectionRefused)
        #expect(!error.isResolutionFailure)
    }
}
