import ChatCaveCLI
import ChatCaveServer
import Foundation
import Testing

@Suite("chatcave command line")
struct CommandLineTests {
    /// Runs a command in-process; its output sink is registered with `leaks`.
    private func run(_ arguments: [String], environment: [String: String] = [:], _ leaks: LeakCheck) async -> (Int32, CapturedOutput) {
        let captured = leaks.track(CapturedOutput())
        let status = await ChatCaveCommandLine.run(arguments, environment: environment, output: captured.output)
        return (status, captured)
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
}
