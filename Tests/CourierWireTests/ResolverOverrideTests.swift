import CourierTestServer
import CourierWire
import Testing

/// ``Resolver`` overrides: chosen host and port pairs are answered without `getaddrinfo`.
@Suite("Resolver overrides", .ownThread)
struct ResolverOverrideTests {
    @Test("an override answers its host (any case, brackets ignored) and port; literals need no lookup; others do")
    func knownAddresses() throws {
        let good = try #require(SocketAddress(ip: "127.0.0.1", port: 8080))
        let other = try #require(SocketAddress(ip: "::1", port: 9090))
        let resolver = Resolver(overrides: [
            .init(host: "Pinned.Example", port: 443, addresses: [other]),
            .init(host: "pinned.example", port: 443, addresses: [good, other]),  // the last one wins
            .init(host: "[::1]", port: 80, addresses: [good]),
        ])
        #expect(resolver.knownAddresses(host: "PINNED.example", port: 443) == [good, other])
        #expect(resolver.knownAddresses(host: "pinned.example", port: 80) == nil)
        #expect(resolver.knownAddresses(host: "::1", port: 80) == [good])
        #expect(resolver.knownAddresses(host: "10.0.0.1", port: 80) == [SocketAddress(ip: "10.0.0.1", port: 80)!])
        #expect(resolver.knownAddresses(host: "localhost", port: 80) == nil)
    }

    @Test("resolve delivers an override's addresses through the completion, without a lookup")
    func resolveUsesOverride() throws {
        let good = try #require(SocketAddress(ip: "127.0.0.1", port: 8080))
        let resolver = Resolver(overrides: [.init(host: "nowhere.invalid", port: 80, addresses: [good])])
        let results = Recorder<Result<[SocketAddress], SocketError>>()
        resolver.resolve(host: "nowhere.invalid", port: 80) { results.append($0) }
        #expect(results.wait(for: 1))
        #expect(try results.values.first?.get() == [good])
    }
}
