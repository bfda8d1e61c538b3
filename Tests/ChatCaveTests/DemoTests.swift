import ChatCave
import ChatCaveCLI
import Foundation
import Testing

@Suite("chatcave demo")
struct DemoTests {
    @Test("the demo runs in-process: a re-authentication, both pollers see every line in order")
    func inProcess() async throws {
        let captured = CapturedOutput()
        let summary = try await ChatCaveDemo.run(options: .init(pollInterval: .milliseconds(50), passwordIterations: 1_000,
                                                                signInDelay: .milliseconds(100)),
                                                 output: captured.output)
        #expect(summary.bob.reauthentications == 1)
        #expect(summary.alice.reauthentications == 0)
        #expect(summary.bob.retries >= 1)
        #expect(summary.unauthorizedAnswers >= 1)
        let chats = { (messages: [Message]) in messages.filter { $0.type == .chat }.compactMap(\.text) }
        #expect(chats(summary.aliceSaw).count == 4)
        #expect(chats(summary.aliceSaw) == chats(summary.bobSaw))
        #expect(Set(summary.aliceSaw.map(\.id)).count == summary.aliceSaw.count)
        #expect(summary.aliceSaw.last?.type == .leave)
        let text = captured.standardLines.joined(separator: "\n")
        #expect(text.contains("Summary"))
        #expect(text.contains("🔒"))
        #expect(captured.errorLines.isEmpty)
    }

    @Test("`chatcave demo` exits 0 through the command line")
    func commandLine() async {
        let captured = CapturedOutput()
        let status = await ChatCaveCommandLine.run(["demo", "--interval", "50"], environment: [:], output: captured.output)
        #expect(status == 0, "\(captured.errorLines)")
        #expect(captured.standardLines.last?.hasPrefix("  ✓") == true)
    }
}
