import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// The warnings printed when ChatCave traffic would cross a network unencrypted.
///
/// The reference server speaks plain HTTP only, and every client request carries the user's
/// API key (a sign-in carries the password). That is safe on the loopback interface, which
/// never leaves the machine, and nowhere else. So `chatcave serve` warns when it binds another
/// address, and a client command warns when it talks `http` to a host that is not loopback.
enum CleartextWarning {
    /// Whether `host` names this machine's loopback interface: `localhost`, `127.0.0.0/8`,
    /// `::1` or `::ffff:127.x.y.z`, with or without brackets and a trailing dot.
    static func isLoopback(_ host: String) -> Bool {
        var name = host.lowercased()
        if name.hasPrefix("["), name.hasSuffix("]") { name = String(name.dropFirst().dropLast()) }
        if name.hasSuffix(".") { name = String(name.dropLast()) }
        if name == "localhost" { return true }
        var v4 = in_addr()
        if inet_pton(AF_INET, name, &v4) == 1 { return UInt32(bigEndian: v4.s_addr) >> 24 == 127 }
        var v6 = in6_addr()
        guard inet_pton(AF_INET6, name, &v6) == 1 else { return false }
        let bytes = withUnsafeBytes(of: v6) { Array($0) }
        let mappedPrefix: [UInt8] = Array(repeating: 0, count: 10) + [0xFF, 0xFF]
        return bytes == Array(repeating: 0, count: 15) + [1] || (Array(bytes.prefix(12)) == mappedPrefix && bytes[12] == 127)
    }

    /// The warning for `chatcave serve --host host`, or `nil` for a loopback address.
    static func forServer(binding host: String) -> String? {
        guard !isLoopback(host) else { return nil }
        return "chatcave serve: warning: listening on \(host), beyond this machine, over plain HTTP: "
            + "passwords and API keys cross the network unencrypted; put a TLS proxy in front, or bind 127.0.0.1"
    }

    /// The warning for a client command talking to `url`, or `nil` for https or a loopback host.
    static func forClient(talkingTo url: URL) -> String? {
        guard url.scheme?.lowercased() == "http", let host = url.host, !isLoopback(host) else { return nil }
        return "chatcave: warning: talking plain http to \(host): your API key (and, at sign-in, your password) "
            + "cross the network unencrypted; use an https:// server URL"
    }
}
