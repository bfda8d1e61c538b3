import CourierTestSupport
import Foundation
import Testing

/// What a test run in a child process ended with.
struct ChildTestOutcome: Sendable {
    /// The child's exit status: 0 passed, 1 a test failed, 128 + signal when it was killed by a
    /// signal; `nil` when it outlived its time limit and was killed.
    let status: Int32?
    /// Its standard output and error, together.
    let output: String

    /// Whether the process died before its test run ended: a crash, not a test failure. That is
    /// a signal (status 128 + signal) or, under a sanitizer, its deadly-signal exit (TSan: 66),
    /// so the test library's closing "Test run with …" line is what tells.
    var crashed: Bool { status != nil && status != 0 && !output.contains("Test run with ") }

    /// Whether the child found exactly one test to run (a filter that matches none passes too),
    /// as the test library's closing line says ("Test run with 1 test in 1 suite passed…").
    var ranOneTest: Bool { output.contains("Test run with 1 test ") }

    /// The crash report in short: the fatal error line, then the crashed thread's first frames.
    var crashReport: String {
        let lines = output.split(separator: "\n").map(String.init)
        let fatal = lines.first { $0.contains("Fatal error") || $0.contains("Program crashed") }
        let trace = lines.firstIndex { $0.hasSuffix("crashed:") || $0.hasPrefix("Current stack trace:") }
        guard let fatal, let trace else { return String(output.suffix(2_000)) }
        return ([fatal] + lines[trace..<min(trace + 9, lines.count)]).joined(separator: "\n")
    }
}

/// Runs the part of a test that can stop the whole process (a crash inside FoundationNetworking)
/// in a child process, so that the crash becomes this test's outcome instead of ending the run.
///
/// The test calls it from its own body. In the test run, it starts the test binary itself
/// (`/proc/self/exe`), filtered to this one test and with `COURIER_CHILD_TEST=<test>` in its
/// environment, waits for it (bounded) and hands its outcome to `check`. In that child, it runs
/// `body` instead.
///
/// - Parameters:
///   - suite: the suite type that declares the test.
///   - test: the test function's name; the caller's by default.
///   - timeout: the child's time limit; it is killed after it. Default: 120 s.
///   - body: the dangerous part, run in the child.
///   - check: asserts on the child's outcome, in the parent.
func runInChildProcess(_ suite: Any.Type, test: String = #function, timeout: Duration = .seconds(120),
                       body: () async throws -> Void, check: (ChildTestOutcome) -> Void) async throws {
    let name = "\(suite)/\(test)"
    if ProcessInfo.processInfo.environment[ChildTestRun.variable] == name {
        try await body()
        return
    }
    check(try await ChildTestRun.run(name, timeout: timeout))
}

/// Starting the test binary again as a child; see ``runInChildProcess(_:test:timeout:body:check:)``.
enum ChildTestRun {
    /// The environment variable that names the one test a child process runs for its parent.
    static let variable = "COURIER_CHILD_TEST"

    /// Runs the test binary filtered to `name` (`Suite/function()`) and collects its outcome.
    ///
    /// The child is this process's own binary, through `/proc/<pid>/exe`: a build that replaces
    /// the binary on disk while the suite runs (and leaves its path naming another one, or none
    /// for a moment) cannot change what the child runs. Its standard output and error share one
    /// file (``ChildProcess/spawn(_:_:stdout:stderr:environment:)``), read whatever its bytes.
    static func run(_ name: String, timeout: Duration) async throws -> ChildTestOutcome {
        let executable = "/proc/\(getpid())/exe"
        let outputFile = FileManager.default.temporaryDirectory.appendingPathComponent("courier-child-\(UUID().uuidString).log").path
        defer { try? FileManager.default.removeItem(atPath: outputFile) }
        let filter = NSRegularExpression.escapedPattern(for: name)
        // No backtracer in the child: symbolicating a crash of this binary takes both cores for
        // about ten seconds, which starves every test running beside it. The fatal error line,
        // which the checks read, is printed all the same.
        let child = try ChildProcess.spawn("/usr/bin/env", ["\(variable)=\(name)", "SWIFT_BACKTRACE=enable=no", executable,
                                                            "--testing-library", "swift-testing", "--filter", filter],
                                           stdout: outputFile, stderr: outputFile)
        let status = await child.wait(timeout: timeout)
        return ChildTestOutcome(status: status, output: output(of: outputFile))
    }

    /// The child's output, whatever its bytes: invalid UTF-8 (a crash in the middle of a
    /// character) is shown with replacement characters rather than making the output vanish,
    /// and a file that cannot be read says so.
    static func output(of path: String) -> String {
        guard let bytes = FileManager.default.contents(atPath: path) else { return "(the child's output file \(path) could not be read)" }
        return String(decoding: bytes, as: UTF8.self)
    }
}

/// Checks a child's outcome for a case where FoundationNetworking is known to stop the process:
/// the case passed, or it crashed with `knownCrash` in its report (recorded as a known issue).
/// Any other outcome (a failed expectation, another crash, a time-out) is a failure.
func expectPassOrKnownCrash(_ outcome: ChildTestOutcome, knownCrash: String, sourceLocation: SourceLocation = #_sourceLocation) {
    if outcome.crashed && outcome.output.contains(knownCrash) {
        withKnownIssue("FoundationNetworking stops the process: \(knownCrash)", isIntermittent: true) {
            Issue.record("the child crashed (status \(outcome.status ?? -1)):\n\(outcome.crashReport)", sourceLocation: sourceLocation)
        }
        return
    }
    #expect(outcome.ranOneTest, "the child ran no test:\n\(outcome.output.suffix(2_000))", sourceLocation: sourceLocation)
    #expect(outcome.status == 0, "the child ended with status \(outcome.status.map(String.init) ?? "none (timed out)"):\n\(outcome.crashReport)",
            sourceLocation: sourceLocation)
}
