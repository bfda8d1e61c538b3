import Courier
import Foundation
import Testing

/// Building ``NativeTransport/AddressOverride`` values: the accepted spellings, and a clear
/// error for each kind of bad input.
@Suite("Native transport: address override values")
struct AddressOverrideTests {
    @Test("numeric addresses with and without ports, IPv6 with and without brackets")
    func accepted() throws {
        let override = try NativeTransport.AddressOverride(
            host: "API.Example.com", port: 8443,
            addresses: ["10.0.0.7", "10.0.0.8:9000", "fd00::7", "[fd00::8]", "[fd00::9]:9001"])
        #expect(override.host == "api.example.com")
        #expect(override.port == 8443)
        #expect(override.addresses == ["10.0.0.7:8443", "10.0.0.8:9000", "[fd00::7]:8443", "[fd00::8]:8443", "[fd00::9]:9001"])
        #expect(try NativeTransport.AddressOverride(host: "[::1]", port: 80, addresses: ["::1"]).host == "::1")
    }

    @Test("the README's example builds a transport with overrides and an attempt delay")
    func readmeExample() throws {
        var configuration = NativeTransport.Configuration(connectTimeout: .seconds(5))
        configuration.addressOverrides = [
            try .init(host: "api.example.com", port: 443, addresses: ["10.0.0.7", "[fd00::7]:8443"]),
        ]
        configuration.connectionAttemptDelay = .milliseconds(300)
        let transport = NativeTransport(configuration: configuration)
        defer { transport.shutdown() }
        let connection = HTTPConnection(baseURL: URL(string: "https://api.example.com")!,
                                        configuration: .init(transport: transport))
        #expect(connection.baseURL?.absoluteString == "https://api.example.com")
        #expect(transport.configuration.addressOverrides.first?.addresses == ["10.0.0.7:443", "[fd00::7]:8443"])
    }

    @Test("bad input is refused with InvalidAddressOverride naming the entry and the reason",
          arguments: [
              ("", 80, ["127.0.0.1"], "the host is empty"),
              ("a.example", 0, ["127.0.0.1"], "the port is not 1...65535"),
              ("a.example", 65536, ["127.0.0.1"], "the port is not 1...65535"),
              ("a.example", 80, [], "no address is given"),
              ("a.example", 80, ["localhost"], "not a numeric"),
              ("a.example", 80, ["127.0.0.1:0"], "not a numeric"),
              ("a.example", 80, ["127.0.0.1:99999"], "not a numeric"),
              ("a.example", 80, ["[::1"], "not a numeric"),
              ("a.example", 80, ["[::1]x"], "not a numeric"),
              ("a.example", 80, ["1.2.3"], "not a numeric"),
          ] as [(String, Int, [String], String)])
    func refused(host: String, port: Int, addresses: [String], reason: String) {
        #expect {
            _ = try NativeTransport.AddressOverride(host: host, port: port, addresses: addresses)
        } throws: { error in
            guard let invalid = error as? NativeTransport.InvalidAddressOverride else { return false }
            return invalid.reason.hasPrefix(reason) && invalid.description.hasPrefix("invalid address override '")
        }
    }
}
