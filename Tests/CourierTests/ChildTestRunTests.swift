import CourierTestSupport
import Foundation
import Testing

/// The child-process runs of ``runInChildProcess(_:test:timeout:body:check:)``: their output
/// arrives whole, so that a check on it (``ChildTestOutcome/ranOneTest``) reads what the child
/// really said. Before, standard output and error were opened as two files on one path; a line
/// printed at exit overwrote the start of the test library's output and could cut a character
/// in two, and the strict UTF-8 read then returned no output at all: "the child ran no test".
@Suite("Child test runs")
struct ChildTestRunTests {
    @Test("standard output and error given one file share it: neither overwrites the other, no character is cut")
    func oneFileForBoth() async throws {
        let path = FileManager.default.temporaryDirectory.appendingPathComponent("courier-child-\(UUID().uuidString).log").path
        defer { try? FileManager.default.removeItem(atPath: path) }
        // Standard error first, then two bytes to standard output: opened twice, the two bytes
        // would land on the first two of the three bytes of "◇".
        let script = #"printf '◇ from standard error\n' >&2; printf 'o\n'; printf '◇ the end\n' >&2"#
        let child = try ChildProcess.spawn("/bin/sh", ["-c", script], stdout: path, stderr: path)
        #expect(await child.wait(timeout: .seconds(10)) == 0)
        let bytes = try #require(FileManager.default.contents(atPath: path))
        let text = try #require(String(validating: bytes, as: UTF8.self), "not UTF-8: \(Array(bytes))")
        #expect(text == "◇ from standard error\no\n◇ the end\n")
    }

    @Test("output that is not valid UTF-8 is still read, with replacement characters")
    func invalidUTF8() throws {
        let path = FileManager.default.temporaryDirectory.appendingPathComponent("courier-child-\(UUID().uuidString).log").path
        defer { try? FileManager.default.removeItem(atPath: path) }
        try Data([0xE2, 0x97] + Array(" Test run with 1 test in 1 suite passed after 0.1 seconds.\n".utf8)).write(to: URL(fileURLWithPath: path))
        let outcome = ChildTestOutcome(status: 0, output: ChildTestRun.output(of: path))
        #expect(outcome.ranOneTest)
        #expect(outcome.output.hasPrefix("\u{FFFD}"))
        #expect(ChildTestRun.output(of: path + ".missing").contains("could not be read"))
    }

    @Test("a child run starts this binary, runs exactly this test, and a line it prints at exit arrives with the test library's")
    func childRunsThisTest() async throws {
        try await runInChildProcess(Self.self, timeout: .seconds(60)) {
            print("CHILD-MARKER ◇ ran in the child")
        } check: { child in
            #expect(child.status == 0, "\(child.output.suffix(2_000))")
            #expect(child.ranOneTest, "\(child.output.suffix(2_000))")
            #expect(child.output.contains("CHILD-MARKER ◇ ran in the child"))
        }
    }
}
