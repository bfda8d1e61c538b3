import ChatCave
import ChatCaveCLI
import CourierTestSupport
import Foundation
import Testing

@Suite("chatcave demo")
struct DemoTests {
    /// Watches the port of the demo's embedded server, read from the demo's first line (the demo
    /// stopped that server before returning; its clients must have closed every socket to it).
    private func watchServer(of captured: CapturedOutput, _ leaks: LeakCheck) {
        let port = captured.standardLines.first?.split(separator: ":").last.flatMap { Int($0) }
        #expect(port != nil, "no server URL in \(String(describing: captured.standardLines.first))")
        if let port { leaks.watch(port: port) }
    }

    @Test("the demo runs in-process: a re-authentication, both pollers see every line in order")
    func inProcess() async throws {
        try await withLeakCheck(watching: []) { leaks in
            let captured = leaks.track(CapturedOutput())
            let summary = try await ChatCaveDemo.run(options: .init(pollInterval: .milliseconds(50), passwordIterations: 1_000,
                                                                    signInDelay: .milliseconds(100)),
                                                     output: captured.output)
            watchServer(of: captured, leaks)
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
    }

    @Test("`chatcave demo` exits 0 through the command line")
    func commandLine() async {
        await withLeakCheck(watching: []) { leaks in
            let captured = leaks.track(CapturedOutput())
            let status = await ChatCaveCommandLine.run(["demo", "--interval", "50"], environment: [:], output: captured.output)
            watchServer(of: captured, leaks)
            #expect(status == 0, "\(captured.errorLines)")
            // The verdict line; a poll that fails while the demo shuts down may print after it.
            #expect(captured.standardLines.contains { $0.hasPrefix("  ✓ both pollers delivered") }, "\(captured.standardLines.suffix(4))")
            #expect(!captured.standardLines.contains { $0.hasPrefix("  ✗") })
        }
    }
}
