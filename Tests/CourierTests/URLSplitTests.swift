@testable import Courier
import Foundation
import Testing

/// How the native transport takes a URL apart (``URLSplit``, through ``NativeRequestTarget``):
/// pool key, `Host` field and request target for every URL form a caller can pass, and a clear
/// `invalidURL` for the ones it cannot use.
@Suite("URL split for the native transport")
struct URLSplitTests {
    static func target(_ text: String) throws -> NativeRequestTarget {
        try NativeRequestTarget(url: try #require(URL(string: text)))
    }

    @Test("scheme, host and port: default ports, explicit ports, letters lower-cased in the key but kept in Host",
          arguments: [
              ("http://example.com/a", false, "example.com", 80, "example.com", "/a"),
              ("https://example.com/a", true, "example.com", 443, "example.com", "/a"),
              ("HTTPS://Example.COM:8443/A/B", true, "example.com", 8443, "Example.COM:8443", "/A/B"),
              ("http://127.0.0.1:8080", false, "127.0.0.1", 8080, "127.0.0.1:8080", "/"),
              ("http://h?x=1", false, "h", 80, "h", "/?x=1"),
              ("http://h/p?q=%20a#frag", false, "h", 80, "h", "/p?q=%20a"),
              ("http://user:pw@h:81/p", false, "h", 81, "h:81", "/p"),
              ("http://[::1]:9000/x", false, "::1", 9000, "[::1]:9000", "/x"),
              ("https://[2001:DB8::1]/", true, "2001:db8::1", 443, "[2001:DB8::1]", "/"),
              ("http://h:65535/", false, "h", 65535, "h:65535", "/"),
          ])
    func parts(url: String, secure: Bool, host: String, port: Int, hostField: String, path: String) throws {
        let target = try Self.target(url)
        #expect(target.key == NativePoolKey(secure: secure, host: host, port: port))
        #expect(target.hostField == hostField)
        #expect(target.path == path)
        #expect(target.proxyAuthorization == nil)
    }

    @Test("URLs the transport cannot use fail with invalidURL and say why",
          arguments: [
              ("ftp://h/x", "the scheme must be http or https"),
              ("http:/h/x", "no authority"),
              ("http://:80/x", "no host"),
              ("http://h:0/x", "is not 1...65535"),
              ("http://h:65536/x", "is not 1...65535"),
              ("http://h:123456/x", "is not 1...65535"),
              ("http://[::1/x", "unterminated IPv6 literal"),
              ("http://[::1]x/", "unexpected text after the IPv6 literal"),
          ])
    func invalid(url: String, reason: String) throws {
        var text = url
        text.makeContiguousUTF8()
        let split = try #require(text.utf8.withContiguousStorageIfAvailable(URLSplit.split))
        guard case .failure(let failure) = split else {
            Issue.record("\(url) was accepted")
            return
        }
        #expect(failure.text.contains(reason))
        // Foundation refuses the malformed IPv6 literals itself; the others reach the transport.
        if let parsed = URL(string: url) {
            #expect {
                try NativeRequestTarget(url: parsed)
            } throws: { error in
                (error as? HTTPConnectionError) == .invalidURL && ((error as? HTTPConnectionError)?.detail ?? "").contains(reason)
            }
        }
    }

    @Test("credentials in the URL never reach the Host field, the target, or the error")
    func userinfo() throws {
        let target = try Self.target("http://ann:s3cret@h/p")
        #expect(!target.hostField.contains("s3cret") && !target.path.contains("s3cret"))
        let failing = try #require(URL(string: "http://ann:s3cret@h:99999/p"))
        do {
            _ = try NativeRequestTarget(url: failing)
            Issue.record("a port of 99999 was accepted")
        } catch {
            #expect(!(error.detail ?? "").contains("s3cret"))
        }
    }
}
