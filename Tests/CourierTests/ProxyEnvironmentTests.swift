@testable import Courier
import CourierTestSupport
import Foundation
import Testing

/// Proxy settings from the environment (``ProxyConfiguration/environment(_:)``) and `NO_PROXY`
/// matching (``NoProxyList``), as a table of (environment, URL) → the proxy curl's rules pick.
/// The same table runs through the installed `curl`, which must pick the same proxy.
@Suite("Proxy settings from the environment")
struct ProxyEnvironmentTests {
    /// One case: the variables, the request URL, and the proxy expected (its description), or
    /// `nil` for direct.
    struct Case: Sendable, CustomTestStringConvertible {
        let environment: [String: String]
        let url: String
        let expected: String?
        /// Why the installed curl decides otherwise, when it does (a curl bug Courier does not copy).
        var curlDiffers: String? = nil
        var testDescription: String { "\(environment.sorted { $0.key < $1.key }) \(url) → \(expected ?? "direct")" }
    }

    static let h11 = "http://127.0.0.1:11", H12 = "http://127.0.0.1:12", s13 = "http://127.0.0.1:13"
    static let S14 = "http://127.0.0.1:14", a15 = "http://127.0.0.1:15", A16 = "http://127.0.0.1:16"

    /// Measured with curl 7.88.1: an IPv6 URL host reaches its `NO_PROXY` check without brackets,
    /// so curl takes it for a name and compares it as text (`::1` matches only `::1`). Courier
    /// matches IPv6 hosts against IPv6 ranges, as curl's documentation describes.
    static let ipv6Ranges = "curl 7.88 compares IPv6 hosts with NO_PROXY as text, so CIDR ranges never hold them"

    static let cases: [Case] = [
        Case(environment: [:], url: "http://www.example.com:9/", expected: nil),
        Case(environment: ["http_proxy": h11], url: "http://www.example.com:9/", expected: h11),
        Case(environment: ["HTTP_PROXY": H12], url: "http://www.example.com:9/", expected: nil),  // httpoxy
        Case(environment: ["HTTP_PROXY": H12, "all_proxy": a15], url: "http://www.example.com:9/", expected: a15),
        Case(environment: ["https_proxy": s13], url: "https://www.example.com:9/", expected: s13),
        Case(environment: ["HTTPS_PROXY": S14], url: "https://www.example.com:9/", expected: S14),
        Case(environment: ["https_proxy": s13, "HTTPS_PROXY": S14], url: "https://www.example.com:9/", expected: s13),
        Case(environment: ["http_proxy": h11], url: "https://www.example.com:9/", expected: nil),
        Case(environment: ["https_proxy": s13], url: "http://www.example.com:9/", expected: nil),
        Case(environment: ["all_proxy": a15], url: "https://www.example.com:9/", expected: a15),
        Case(environment: ["ALL_PROXY": A16], url: "http://www.example.com:9/", expected: A16),
        Case(environment: ["all_proxy": a15, "ALL_PROXY": A16], url: "http://www.example.com:9/", expected: a15),
        Case(environment: ["http_proxy": h11, "all_proxy": a15], url: "http://www.example.com:9/", expected: h11),
        Case(environment: ["https_proxy": s13, "ALL_PROXY": A16], url: "https://www.example.com:9/", expected: s13),
        Case(environment: ["http_proxy": "", "all_proxy": a15], url: "http://www.example.com:9/", expected: a15),
        Case(environment: ["http_proxy": h11, "no_proxy": "*"], url: "http://www.example.com:9/", expected: nil),
        Case(environment: ["http_proxy": h11, "no_proxy": "example.com"], url: "http://www.example.com:9/", expected: nil),
        Case(environment: ["http_proxy": h11, "no_proxy": ".example.com"], url: "http://www.example.com:9/", expected: nil),
        Case(environment: ["http_proxy": h11, "no_proxy": ".example.com"], url: "http://example.com:9/", expected: nil),
        Case(environment: ["http_proxy": h11, "no_proxy": "example.com"], url: "http://notexample.com:9/", expected: h11),
        Case(environment: ["http_proxy": h11, "no_proxy": "EXAMPLE.com"], url: "http://www.Example.COM:9/", expected: nil),
        Case(environment: ["http_proxy": h11, "NO_PROXY": "example.com"], url: "http://www.example.com:9/", expected: nil),
        Case(environment: ["http_proxy": h11, "no_proxy": "other.org", "NO_PROXY": "example.com"], url: "http://www.example.com:9/", expected: h11),
        Case(environment: ["http_proxy": h11, "no_proxy": "a.org, example.com"], url: "http://www.example.com:9/", expected: nil),
        Case(environment: ["http_proxy": h11, "no_proxy": "a.org example.com"], url: "http://www.example.com:9/", expected: nil),
        Case(environment: ["http_proxy": h11, "no_proxy": "a.org\texample.com"], url: "http://www.example.com:9/", expected: nil),
        Case(environment: ["http_proxy": h11, "no_proxy": "*.example.com"], url: "http://www.example.com:9/", expected: h11),
        Case(environment: ["http_proxy": h11, "no_proxy": "a.org,*"], url: "http://www.example.com:9/", expected: h11),
        Case(environment: ["http_proxy": h11, "no_proxy": "example.com:8080"], url: "http://www.example.com:8080/", expected: h11),
        Case(environment: ["http_proxy": h11, "no_proxy": "example.com,"], url: "http://example.com:9/", expected: nil),
        Case(environment: ["http_proxy": h11, "no_proxy": ",,"], url: "http://example.com:9/", expected: h11),
        Case(environment: ["http_proxy": h11, "no_proxy": "example.com."], url: "http://www.example.com:9/", expected: nil),
        Case(environment: ["http_proxy": h11, "no_proxy": "example.com"], url: "http://www.example.com.:9/", expected: nil),
        Case(environment: ["http_proxy": h11, "no_proxy": "localhost"], url: "http://localhost:9/", expected: nil),
        Case(environment: ["http_proxy": h11, "no_proxy": "127.0.0.1"], url: "http://127.0.0.1:9/", expected: nil),
        Case(environment: ["http_proxy": h11, "no_proxy": "127.0.0.0/8"], url: "http://127.0.0.1:9/", expected: nil),
        Case(environment: ["http_proxy": h11, "no_proxy": "10.0.0.0/8"], url: "http://127.0.0.1:9/", expected: h11),
        Case(environment: ["http_proxy": h11, "no_proxy": "127.0.0.2"], url: "http://127.0.0.1:9/", expected: h11),
        Case(environment: ["http_proxy": h11, "no_proxy": "127.0.0.0/33"], url: "http://127.0.0.1:9/", expected: h11),
        Case(environment: ["http_proxy": h11, "no_proxy": "127.0.0.0"], url: "http://127.0.0.1:9/", expected: h11),
        Case(environment: ["http_proxy": h11, "no_proxy": "example.com"], url: "http://127.0.0.1:9/", expected: h11),
        Case(environment: ["http_proxy": h11, "no_proxy": "::1"], url: "http://[::1]:9/", expected: nil),
        Case(environment: ["http_proxy": h11, "no_proxy": "::/0"], url: "http://[::1]:9/", expected: h11),
        Case(environment: ["http_proxy": h11, "no_proxy": "::/120"], url: "http://[::1]:9/", expected: nil, curlDiffers: ipv6Ranges),
        Case(environment: ["http_proxy": h11, "no_proxy": "::/127"], url: "http://[::1]:9/", expected: nil, curlDiffers: ipv6Ranges),
        Case(environment: ["http_proxy": h11, "no_proxy": "fe80::/10"], url: "http://[::1]:9/", expected: h11),
        Case(environment: ["https_proxy": s13, "no_proxy": "127.0.0.1"], url: "https://127.0.0.1:9/", expected: nil),
        Case(environment: ["http_proxy": "socks5h://127.0.0.1:17"], url: "http://www.example.com:9/", expected: "socks5h://127.0.0.1:17"),
        Case(environment: ["all_proxy": "socks5://user:pw@127.0.0.1:18"], url: "https://www.example.com:9/", expected: "socks5://127.0.0.1:18"),
        Case(environment: ["http_proxy": "127.0.0.1:19"], url: "http://www.example.com:9/", expected: "http://127.0.0.1:19"),
        Case(environment: ["http_proxy": "HTTP://127.0.0.1:20/"], url: "http://www.example.com:9/", expected: "http://127.0.0.1:20"),
        Case(environment: ["http_proxy": "http://127.0.0.1"], url: "http://www.example.com:9/", expected: "http://127.0.0.1:1080"),
    ]

    @Test("Courier picks the proxy curl's rules pick", arguments: cases)
    func table(_ item: Case) throws {
        // The table holds curl's rules, which have no loopback exception; Courier's is tested apart.
        var configuration = ProxyConfiguration.environment(item.environment)
        configuration.bypassesLoopback = false
        let proxy = try configuration.proxy(for: try #require(URL(string: item.url)))
        #expect(proxy?.description == item.expected)
    }

    @Test("the installed curl picks the same proxy for every case of the table",
          .enabled(if: FileManager.default.isExecutableFile(atPath: "/usr/bin/curl"), "curl is not installed; the table is not compared with curl"))
    func sameAsCurl() async throws {
        let directory = URL(fileURLWithPath: NSTemporaryDirectory()).appendingPathComponent("courier-curl-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        // Eight curl runs at a time (each costs at least the child guard's half-second poll).
        let compared = Self.cases.enumerated().filter { $0.element.curlDiffers == nil }
        var choices: [Int: String?] = [:]
        for batch in stride(from: 0, to: compared.count, by: 8) {
            try await withThrowingTaskGroup(of: (Int, String?).self) { group in
                for (index, item) in compared[batch..<min(batch + 8, compared.count)] {
                    let log = directory.appendingPathComponent("\(index).log").path
                    group.addTask { (index, try await blocking { try Self.curlProxy(item, log: log) }) }
                }
                for try await (index, chosen) in group { choices[index] = chosen }
            }
        }
        #expect(compared.count >= 45)
        for (index, item) in compared {
            let chosen = choices[index] ?? "not run"
            #expect(chosen == item.expected, "curl picks \(chosen ?? "direct") for \(item.testDescription)")
        }
    }

    /// Runs curl with only the case's variables and reads which proxy variable it used from its
    /// verbose output ("Uses proxy env variable http_proxy == '…'"); the proxy's description, or
    /// `nil` when it went direct. Every address involved refuses at once (ports 1–20 and 9 on
    /// loopback; names are pinned to 127.0.0.1 with `--resolve`), so no packet leaves the machine.
    static func curlProxy(_ item: Case, log: String) throws -> String? {
        guard let url = URL(string: item.url) else { throw PeerError("bad URL \(item.url)") }
        var arguments = ["-i"] + item.environment.map { "\($0.key)=\($0.value)" }
        arguments += ["/usr/bin/curl", "-sv", "--max-time", "5", "-o", "/dev/null"]
        if let host = url.host, SocketAddressCheck.isName(host), host != "localhost" {
            arguments += ["--resolve", "\(host):\(url.port ?? 80):127.0.0.1"]
        }
        arguments.append(item.url)
        let child = try ChildProcess.spawn("/usr/bin/env", arguments, stderr: log)
        child.wait()
        let text = try String(contentsOfFile: log, encoding: .utf8)
        for line in text.split(separator: "\n") where line.contains("Uses proxy env variable") && !line.lowercased().contains("no_proxy") {
            guard let open = line.firstIndex(of: "'"), let close = line.lastIndex(of: "'"), open < close else { continue }
            return try Proxy(url: String(line[line.index(after: open)..<close])).description
        }
        return nil
    }

    // MARK: - The parts

    @Test("loopback hosts bypass an environment proxy (as in Go's net/http), never an explicit one")
    func loopbackBypass() throws {
        let environment = ProxyConfiguration.environment(["all_proxy": "http://proxy.example:3128", "no_proxy": ""])
        #expect(environment.bypassesLoopback)
        let loopback = ["http://localhost:8080/", "https://LOCALHOST./", "http://api.localhost/", "http://127.0.0.1/",
                        "http://127.255.0.9:81/", "http://[::1]:8080/", "https://[::ffff:127.0.0.1]/"]
        for url in loopback {
            #expect(try environment.proxy(for: URL(string: url)!) == nil, "\(url)")
        }
        let remote = ["http://example.com/", "http://128.0.0.1/", "http://[::2]/", "http://localhost.example.com/",
                      "http://mylocalhost/", "https://[::ffff:10.0.0.1]/"]
        for url in remote {
            #expect(try environment.proxy(for: URL(string: url)!)?.description == "http://proxy.example:3128", "\(url)")
        }
        let explicit = ProxyConfiguration(all: Proxy(.http, host: "127.0.0.1", port: 3128))
        #expect(!explicit.bypassesLoopback)
        #expect(try explicit.proxy(for: URL(string: "http://localhost:8080/")!) != nil)
        #expect(try explicit.proxy(for: URL(string: "http://127.0.0.1:8080/")!) != nil)
        var optedOut = environment
        optedOut.bypassesLoopback = false
        #expect(try optedOut.proxy(for: URL(string: "http://127.0.0.1/")!) != nil)
    }

    @Test("an unusable proxy variable fails the requests it would carry instead of going direct")
    func unusable() throws {
        let configuration = ProxyConfiguration.environment(["https_proxy": "socks4://user:secret@proxy.example:1080", "no_proxy": "internal"])
        let error = #expect(throws: HTTPConnectionError.self) {
            try configuration.proxy(for: URL(string: "https://example.com/")!)
        }
        #expect(error == .invalidURL)
        #expect(error?.description.contains("https_proxy") == true)
        #expect(error?.description.contains("secret") == false)
        #expect(try configuration.proxy(for: URL(string: "http://example.com/")!) == nil)
        #expect(try configuration.proxy(for: URL(string: "https://internal/")!) == nil)
    }

    @Test("proxy URLs: scheme, credentials (percent-decoded), IPv6, default port, and what is refused")
    func proxyURLs() throws {
        let proxy = try Proxy(url: "http://us%40er:p%3Ass@Proxy.Example:3128")
        #expect(proxy.kind == .http && proxy.host == "proxy.example" && proxy.port == 3128)
        #expect(proxy.credentials == ProxyCredentials(username: "us@er", password: "p:ss"))
        #expect(proxy.description == "http://proxy.example:3128")
        #expect("\(proxy.credentials!)" == "<redacted>")
        var dumped = ""
        dump(proxy, to: &dumped)
        #expect(!dumped.contains("p:ss") && !dumped.contains("us@er"), "\(dumped)")
        #expect(!String(reflecting: proxy).contains("p:ss"))
        #expect(try Proxy(url: "socks5h://[::1]:1080").description == "socks5h://[::1]:1080")
        #expect(try Proxy(url: "proxy.example").port == 1080)
        #expect(try Proxy(url: "HTTPS://proxy").description == "https://proxy:443")
        for bad in ["socks4://proxy:1080", "socks4a://proxy:1080", "https://proxy:0", "http://proxy:0", "http://proxy:99999", "http://:8080", "http://proxy/path"] {
            #expect(throws: HTTPConnectionError.invalidURL, "\(bad)") { try Proxy(url: bad) }
        }
    }

    @Test("NoProxyList matches names, suffixes, addresses and CIDR ranges by curl's rules")
    func noProxy() {
        let list = NoProxyList(" .corp.example , 10.0.0.0/8,192.168.1.7, fd00::/8 ,localhost.")
        #expect(list.matches(host: "corp.example"))
        #expect(list.matches(host: "git.corp.example"))
        #expect(!list.matches(host: "notcorp.example"))
        #expect(list.matches(host: "10.200.3.4"))
        #expect(!list.matches(host: "11.0.0.1"))
        #expect(list.matches(host: "192.168.1.7"))
        #expect(!list.matches(host: "192.168.1.8"))
        #expect(list.matches(host: "fd12::1"))
        #expect(list.matches(host: "[fd12::1]"))
        #expect(!list.matches(host: "fe80::1"))
        #expect(list.matches(host: "LOCALHOST"))
        #expect(!NoProxyList("").matches(host: "localhost"))
        #expect(!NoProxyList("[::1]").matches(host: "::1"))
    }
}

/// Whether a URL host is a name (not an IP address), for the curl runs.
enum SocketAddressCheck {
    static func isName(_ host: String) -> Bool {
        !host.hasPrefix("[") && !host.contains(":") && host.split(separator: ".").contains { Int($0) == nil }
    }
}
