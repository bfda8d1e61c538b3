import ChatCaveCLI
import ChatCaveServer
import Foundation
import Testing

extension CommandLineTests {
    @Test("a revoked key with only CHATCAVE_PASSWORD set: the CLI signs in again as the saved session's user")
    func signsInAgainWithTheSavedName() async throws {
        try await withServer { server, environment, leaks in
            var (status, output) = await run(["signup", "--name", "alice", "--password", "pw"], environment: environment, leaks)
            #expect(status == 0, "\(output.errorLines)")
            (status, output) = await run(["create", "Lobby"], environment: environment, leaks)
            #expect(status == 0, "\(output.errorLines)")

            // The key is revoked behind the CLI's back; only the password is in the environment.
            server.revokeAPIKey(forUserNamed: "alice")
            var passwordOnly = environment
            passwordOnly["CHATCAVE_PASSWORD"] = "pw"
            (status, output) = await run(["rooms"], environment: passwordOnly, leaks)
            #expect(status == 0, "\(output.errorLines)")
            #expect(output.standardLines.first?.hasPrefix("Lobby") == true)
            #expect(!output.errorLines.contains { $0.contains("not signed in") })

            // The renewed key was saved: the next command needs no password at all.
            (status, output) = await run(["rooms"], environment: environment, leaks)
            #expect(status == 0, "\(output.errorLines)")

            // `signin` with only the password signs in as the saved session's user; `signup` does not reuse the name.
            (status, output) = await run(["signin"], environment: passwordOnly, leaks)
            #expect(status == 0, "\(output.errorLines)")
            #expect(output.standardLines.first?.hasPrefix("Signed in as alice") == true)
            (status, output) = await run(["signup"], environment: passwordOnly, leaks)
            #expect(status == 1)

            // A wrong password is still refused, and without a password nothing is guessed.
            server.revokeAPIKey(forUserNamed: "alice")
            var wrong = environment
            wrong["CHATCAVE_PASSWORD"] = "not it"
            (status, output) = await run(["rooms"], environment: wrong, leaks)
            #expect(status == 1)
            (status, output) = await run(["rooms"], environment: environment, leaks)
            #expect(status == 1)
        }
    }
}
