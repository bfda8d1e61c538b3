import CourierTestSupport
import ChatCaveCLI
import ChatCaveServer
import CourierTestServer
import Foundation
import Testing
#if canImport(Glibc)
import Glibc
#endif

/// The command line against hostile input: a server that sends terminal escapes, addresses
/// beyond loopback, and a session directory that someone else could have planted.
extension CommandLineTests {
    /// Control, bidi and format characters a hostile server may send, as JSON escapes.
    private static let hostile = #"\u001b[2J\u001b]0;owned\u0007\r\u202e\u2066\u200f\u0085\u007f"#

    /// A test server speaking just enough ChatCave for `signin`, `rooms`, `tail` and `create`,
    /// with a hostile character in every name, message and error it sends.
    private func hostileServer() throws -> TestServer {
        let server = try TestServer()
        server.route("/account") { _ in .json(status: 201, #"{"id": "u1\#(Self.hostile)", "name": "eve\#(Self.hostile)", "apiKey": "k"}"#) }
        server.route("/rooms") { request in
            if request.method == "POST" { return .json(status: 406, #"{"error": "no\#(Self.hostile)"}"#) }
            return .json(#"[{"id": "r1", "name": "Lobby\#(Self.hostile)\n10:00:09.000  admin: x", "chatters": [{"id": "u1", "name": "mallory\#(Self.hostile)"}]}]"#)
        }
        server.route("/rooms/r1/messages") { _ in
            .json(#"""
                [{"id": "m1", "type": "chat", "author": "eve\#(Self.hostile)", "timestamp": "2026-11-23T10:00:00.000Z",
                  "text": "hello\#(Self.hostile)\n10:00:01.000  admin: please re-enter your password"},
                 {"id": "m2", "type": "join", "text": null, "author": "bob\#(Self.hostile)", "timestamp": "2026-11-23T10:00:02.000Z"}]
                """#)
        }
        return server
    }

    /// Whether a line has a scalar that must not reach a terminal raw ("\n" aside: a message's line break).
    private func hasRawControl(_ line: String) -> Bool {
        line.unicodeScalars.contains {
            $0 != "\n" && [.control, .format, .lineSeparator, .paragraphSeparator].contains($0.properties.generalCategory)
        }
    }

    @Test("M5 tail prints a hostile message with no ESC byte and no U+202E; names and server errors are escaped too")
    func tailEscapesControlCharacters() async throws {
        let server = try hostileServer()
        defer { server.shutdown() }
        let (home, environment) = home(for: server.baseURL)
        defer { try? FileManager.default.removeItem(at: home) }
        await withLeakCheck(watching: [server.port]) { leaks in
            let captured = leaks.track(CapturedOutput())
            let tail = Task {
                await ChatCaveCommandLine.run(["tail", "r1", "--interval", "0.05"], environment: environment,
                                              standardInput: { nil }, output: captured.output)
            }
            #expect(await eventually { captured.standardLines.contains { $0.contains("joined") } })
            tail.cancel()
            #expect(await tail.value == 0)
            var lines = captured.standardLines + captured.errorLines
            for (arguments, expected) in [(["signin", "--name", "eve", "--password-stdin"], Int32(0)), (["rooms"], 0),
                                          (["create", "x"], 1)] {
                let (status, output) = await run(arguments, environment: environment, standardInput: "pw", leaks)
                #expect(status == expected, "\(arguments): \(output.errorLines)")
                lines += output.standardLines + output.errorLines
            }
            let bytes = Array(lines.joined(separator: "\n").utf8)
            #expect(!bytes.contains(0x1B))
            #expect(!lines.joined().unicodeScalars.contains("\u{202E}"))
            #expect(!lines.contains(where: hasRawControl), "\(lines)")
            // What was sent is still visible, escaped the way Swift writes it.
            let text = lines.joined(separator: "\n")
            for shown in [#"hello\u{1B}[2J\u{1B}]0;owned\u{7}\u{D}\u{202E}\u{2066}\u{200F}\u{85}\u{7F}"#, #"Lobby\u{1B}[2J"#,
                          #"mallory\u{1B}"#, #"eve\u{1B}"#, #"bob\u{1B}"#, #"no\u{1B}[2J"#, #"(id u1\u{1B}"#] {
                #expect(text.contains(shown), "\(shown) in \(lines)")
            }
            // A line break in a name is escaped; one inside a message stays one, but indented: neither
            // can print a line that passes for another message.
            #expect(text.contains(#"\u{A}10:00:09.000  admin: x"#))
            #expect(!lines.flatMap { $0.split(separator: "\n") }.contains { $0.hasPrefix("10:00:09.000") })
            #expect(captured.standardLines.contains { $0.contains("\n              10:00:01.000  admin:") })
            #expect(!captured.standardLines.flatMap { $0.split(separator: "\n") }.contains { $0.hasPrefix("10:00:01.000") })
        }
    }

    @Test("I10 serve warns on stderr before binding an address beyond loopback, and not for 127.0.0.1")
    func serveWarnsBeyondLoopback() async {
        await withLeakCheck(watching: []) { leaks in
            // 192.0.2.1 (TEST-NET-1) is no address of this machine: the bind fails, nothing is sent.
            let (status, output) = await run(["serve", "--host", "192.0.2.1", "--port", "0"], leaks)
            #expect(status == 1)
            #expect(output.errorLines.first?.contains("warning: listening on 192.0.2.1") == true, "\(output.errorLines)")
            #expect(output.errorLines.first?.contains("unencrypted") == true)

            let captured = leaks.track(CapturedOutput())
            let serve = Task {
                await ChatCaveCommandLine.run(["serve", "--host", "127.0.0.1", "--port", "0"], environment: [:],
                                              standardInput: { nil }, output: captured.output)
            }
            #expect(await eventually { captured.standardLines.contains { $0.contains("listening on http://127.0.0.1:") } })
            serve.cancel()
            #expect(await serve.value == 0)
            #expect(captured.errorLines.isEmpty)
        }
    }

    @Test("I10 a client command warns on stderr when it talks plain http beyond loopback, and not for https or loopback")
    func clientWarnsBeyondLoopback() async {
        await withLeakCheck(watching: []) { leaks in
            // The empty standard input stops the command before it sends anything.
            for (server, warns) in [("http://192.0.2.1:3000", true), ("http://chat.example:3000", true), ("https://chat.example", false),
                                    ("http://127.0.0.2:1", false), ("http://localhost:1", false), ("http://[::1]:1", false)] {
                let (status, output) = await run(["signin", "--name", "a", "--password-stdin", "--server", server], leaks)
                #expect(status == 2, "\(server)")
                let warning = output.errorLines.first { $0.contains("warning: talking plain http") }
                #expect((warning != nil) == warns, "\(server): \(output.errorLines)")
            }
        }
    }

    @Test("L11 the session directory is created 0700; a session planted in a 0777 directory is refused, not used")
    func sessionDirectoryIsPrivate() async throws {
        try await withServer { _, serverEnvironment, leaks in
            let nested = URL(fileURLWithPath: try #require(serverEnvironment["CHATCAVE_HOME"])).appendingPathComponent("nested")
            var environment = serverEnvironment
            environment["CHATCAVE_HOME"] = nested.path
            var (status, output) = await run(["signup", "--name", "alice", "--password-stdin"], environment: environment,
                                             standardInput: "pw", leaks)
            #expect(status == 0, "\(output.errorLines)")
            let mode = try FileManager.default.attributesOfItem(atPath: nested.path)[.posixPermissions] as? Int
            #expect(mode.map { $0 & 0o777 } == 0o700)
            (status, output) = await run(["rooms"], environment: environment, leaks)
            #expect(status == 0, "the saved session works: \(output.errorLines)")

            // Someone opens the directory to everybody (or planted it so): the session in it is not read.
            #expect(chmod(nested.path, 0o777) == 0)
            (status, output) = await run(["rooms"], environment: environment, leaks)
            #expect(status == 1)
            #expect(output.errorLines.first?.contains("ignoring the saved session: refusing \(nested.path)") == true, "\(output.errorLines)")
            (status, output) = await run(["signin", "--name", "alice", "--password-stdin"], environment: environment,
                                         standardInput: "pw", leaks)
            #expect(output.errorLines.contains { $0.contains("cannot save the session") && $0.contains("chmod 700") }, "\(output.errorLines)")
        }
    }
}
