import ChatCaveCLI
import ChatCaveServer
import CourierTestSupport
import Foundation
import Testing
#if canImport(Glibc)
import Glibc
#endif

@Suite("chatcave command line")
struct CommandLineTests {
    /// Runs a command in-process, with `standardInput` as the one line of standard input (none
    /// by default); its output sink is registered with `leaks`.
    func run(_ arguments: [String], environment: [String: String] = [:], standardInput: String? = nil,
             _ leaks: LeakCheck) async -> (Int32, CapturedOutput) {
        let captured = leaks.track(CapturedOutput())
        let status = await ChatCaveCommandLine.run(arguments, environment: environment, standardInput: { standardInput },
                                                   output: captured.output)
        return (status, captured)
    }

    /// A fresh `CHATCAVE_HOME` path (not created) and an environment for `server` using it.
    func home(for server: URL) -> (URL, [String: String]) {
        let home = FileManager.default.temporaryDirectory.appendingPathComponent("chatcave-cli-\(UUID().uuidString)")
        return (home, ["CHATCAVE_SERVER": server.absoluteString, "CHATCAVE_HOME": home.path])
    }

    /// Starts a reference server (cheap password hashing) and runs `body` under a ``LeakCheck``
    /// watching its port, with an environment naming the server and a fresh `CHATCAVE_HOME`
    /// (removed afterwards); then stops the server.
    func withServer(_ body: (ChatCaveServer, [String: String], LeakCheck) async throws -> Void) async throws {
        let server = try ChatCaveServer(port: 0, configuration: .init(passwordIterations: 1_000))
        defer { server.shutdown() }
        let (home, environment) = home(for: server.baseURL)
        defer { try? FileManager.default.removeItem(at: home) }
        try await withLeakCheck(watching: [server.port]) { leaks in try await body(server, environment, leaks) }
    }

    @Test("--help works on every command and exits 0")
    func help() async {
        await withLeakCheck(watching: []) { leaks in
            for command in ["demo", "serve", "signup", "signin", "signout", "rooms", "create", "join", "leave", "say", "tail", "delete"] {
                let (status, output) = await run([command, "--help"], leaks)
                #expect(status == 0, "\(command)")
                #expect(output.standardLines.first?.hasPrefix("USAGE: chatcave \(command)") == true, "\(command)")
            }
            let (status, output) = await run(["--help"], leaks)
            #expect(status == 0)
            #expect(output.standardLines.joined().contains("COMMANDS"))
        }
    }

    @Test("usage mistakes exit 2: no command, unknown command or option, missing argument, bad port")
    func usageErrors() async {
        await withLeakCheck(watching: []) { leaks in
            for arguments in [[], ["fly"], ["rooms", "--colour"], ["create"], ["say", "Lobby"], ["serve", "--port", "99999"],
                              ["serve", "--port"], ["rooms", "--server", "ftp://x"], ["demo", "--interval", "1"]] {
                let (status, output) = await run(arguments, leaks)
                #expect(status == 2, "\(arguments)")
                #expect(!output.errorLines.isEmpty, "\(arguments)")
            }
            let (status, _) = await run(["serve"], environment: ["PORT": "abc"], leaks)
            #expect(status == 2)
        }
    }

    @Test("client commands against a server; the session file is mode 0600; failures exit 1")
    func clientCommands() async throws {
        let server = try ChatCaveServer(port: 0, configuration: .init(passwordIterations: 1_000))
        defer { server.shutdown() }
        let home = FileManager.default.temporaryDirectory.appendingPathComponent("chatcave-cli-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: home) }
        // Each command shuts its own transport down when it finishes: no pooled socket remains.
        try await withLeakCheck(watching: [server.port]) { leaks in
            let environment = ["CHATCAVE_SERVER": server.baseURL.absoluteString, "CHATCAVE_HOME": home.path]
            var (status, output) = await run(["signup", "--name", "alice", "--password", "pw"], environment: environment, leaks)
            #expect(status == 0, "\(output.errorLines)")
            let session = home.appendingPathComponent("session.json")
            let mode = try FileManager.default.attributesOfItem(atPath: session.path)[.posixPermissions] as? NSNumber
            #expect(mode?.intValue == 0o600)
            for arguments in [["create", "Lobby"], ["join", "Lobby"], ["say", "Lobby", "hello", "cave"], ["rooms"]] {
                (status, output) = await run(arguments, environment: environment, leaks)
                #expect(status == 0, "\(arguments): \(output.errorLines)")
            }
            #expect(output.standardLines.first?.hasPrefix("Lobby") == true)
            (status, output) = await run(["create", "Lobby"], environment: environment, leaks)
            #expect(status == 1)
            #expect(output.errorLines.first?.contains("already exists") == true)
            (status, output) = await run(["join", "Nowhere"], environment: environment, leaks)
            #expect(status == 1)

            // A revoked key: the client signs in again with the credentials from the environment.
            server.revokeAPIKey(forUserNamed: "alice")
            var withCredentials = environment
            withCredentials["CHATCAVE_NAME"] = "alice"
            withCredentials["CHATCAVE_PASSWORD"] = "pw"
            (status, output) = await run(["leave", "Lobby"], environment: withCredentials, leaks)
            #expect(status == 0, "\(output.errorLines)")
            (status, output) = await run(["delete", "Lobby"], environment: environment, leaks)  // the renewed key was saved
            #expect(status == 0, "\(output.errorLines)")
            (status, output) = await run(["signout"], environment: environment, leaks)
            #expect(status == 0)
            #expect(!FileManager.default.fileExists(atPath: session.path))
            (status, output) = await run(["rooms"], environment: environment, leaks)
            #expect(status == 1)
            (status, output) = await run(["rooms"], environment: ["CHATCAVE_SERVER": "http://127.0.0.1:1", "CHATCAVE_HOME": home.path], leaks)
            #expect(status == 1)
            #expect(output.errorLines.first?.contains("cannot reach") == true)
        }
    }

    @Test("L10 --password-stdin signs up and in with one line of standard input, with no warning")
    func passwordFromStandardInput() async throws {
        try await withServer { server, environment, leaks in
            var (status, output) = await run(["signup", "--name", "alice", "--password-stdin"], environment: environment,
                                             standardInput: "s3cret pass", leaks)
            #expect(status == 0, "\(output.errorLines)")
            #expect(output.errorLines.isEmpty)
            (status, output) = await run(["signin", "--name", "alice", "--password-stdin"], environment: environment,
                                         standardInput: "s3cret pass", leaks)
            #expect(status == 0, "\(output.errorLines)")
            #expect(output.standardLines.first?.hasPrefix("Signed in as alice") == true)
            (status, output) = await run(["signin", "--name", "alice", "--password-stdin"], environment: environment,
                                         standardInput: "wrong", leaks)
            #expect(status == 1)
            #expect(output.errorLines.first?.contains("the name or password is wrong") == true)
        }
    }

    @Test("L10 --password-file signs in from a 0600 file, and refuses a file that group or others may read")
    func passwordFromFile() async throws {
        let file = FileManager.default.temporaryDirectory.appendingPathComponent("chatcave-password-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: file) }
        try Data("s3cret pass\nsecond line is ignored\n".utf8).write(to: file)
        try await withServer { server, environment, leaks in
            #expect(chmod(file.path, 0o600) == 0)
            var (status, output) = await run(["signup", "--name", "alice", "--password-file", file.path], environment: environment, leaks)
            #expect(status == 0, "\(output.errorLines)")
            #expect(output.errorLines.isEmpty)
            (status, output) = await run(["signin", "--name", "alice", "--password", "s3cret pass"], environment: environment, leaks)
            #expect(status == 0, "the file's first line, without its newline, was the password: \(output.errorLines)")

            let requests = server.totalRequests
            for mode in [0o644, 0o640, 0o604] {
                #expect(chmod(file.path, mode_t(mode)) == 0)
                (status, output) = await run(["signin", "--name", "alice", "--password-file", file.path], environment: environment, leaks)
                #expect(status == 2, "mode \(String(mode, radix: 8))")
                #expect(output.errorLines.first?.contains("chmod 600") == true, "\(output.errorLines)")
            }
            (status, output) = await run(["signin", "--name", "alice", "--password-file", file.path + "-missing"], environment: environment, leaks)
            #expect(status == 2)
            #expect(output.errorLines.first?.contains("No such file") == true, "\(output.errorLines)")
            #expect(server.totalRequests == requests, "a refused password file sends nothing")
        }
    }

    @Test("L10 --password on the command line still signs in, but warns on stderr to use --password-stdin")
    func passwordOnCommandLineWarns() async throws {
        try await withServer { server, environment, leaks in
            let (status, output) = await run(["signup", "--name", "alice", "--password", "pw"], environment: environment, leaks)
            #expect(status == 0)
            #expect(output.errorLines.count == 1)
            #expect(output.errorLines.first?.contains("warning") == true && output.errorLines.first?.contains("--password-stdin") == true)
            // CHATCAVE_PASSWORD is not on the command line: no warning.
            var withPassword = environment
            withPassword["CHATCAVE_PASSWORD"] = "pw"
            let (again, quiet) = await run(["signin", "--name", "alice"], environment: withPassword, leaks)
            #expect(again == 0)
            #expect(quiet.errorLines.isEmpty)
        }
    }

    @Test("L10 two password options, or --password-stdin with nothing on standard input, are usage errors; help names them")
    func passwordOptionMistakes() async {
        await withLeakCheck(watching: []) { leaks in
            for (arguments, input) in [(["signin", "--password", "a", "--password-stdin"], "b"),
                                       (["signin", "--password-file", "/dev/null", "--password-stdin"], "b"),
                                       (["signin", "--password-stdin"], nil), (["signin", "--password-stdin"], ""),
                                       (["signin", "--password-stdin=x"], "b")] as [([String], String?)] {
                let (status, output) = await run(arguments + ["--server", "http://127.0.0.1:1"], standardInput: input, leaks)
                #expect(status == 2, "\(arguments)")
                #expect(!output.errorLines.isEmpty, "\(arguments)")
            }
            for arguments in [["--help"], ["signin", "--help"]] {
                let help = await run(arguments, leaks).1.standardLines.joined(separator: "\n")
                #expect(help.contains("--password-stdin") && help.contains("--password-file PATH"), "\(arguments)")
            }
        }
    }
}
