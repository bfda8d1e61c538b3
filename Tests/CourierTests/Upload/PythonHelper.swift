import CourierTestSupport
import Foundation
import Testing

/// Runs small Python 3 scripts (the standard library only) as independent peers and parsers.
enum PythonHelper {
    static let path = "/usr/bin/python3"
    /// Whether python3 is installed.
    static var isInstalled: Bool { FileManager.default.isExecutableFile(atPath: path) }
    /// Why the tests that need it are skipped.
    static let skipReason: Comment = "python3 is not installed (apt-get install python3); the tests that use it as an independent peer are skipped"

    /// Writes `script` to a temporary file and starts it with `arguments`; its standard output
    /// goes to the returned file.
    static func start(_ script: String, _ arguments: [String] = []) throws -> (process: ChildProcess, output: String, cleanup: @Sendable () -> Void) {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("courier-python-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        let scriptPath = directory.appendingPathComponent("script.py").path
        try script.write(toFile: scriptPath, atomically: true, encoding: .utf8)
        let output = directory.appendingPathComponent("out.txt").path
        let process = try ChildProcess.spawn(path, [scriptPath] + arguments, stdout: output,
                                             stderr: directory.appendingPathComponent("err.txt").path)
        let cleanup: @Sendable () -> Void = { try? FileManager.default.removeItem(at: directory) }
        return (process, output, cleanup)
    }

    /// Runs `script` to its end (at most `timeout`) and returns its standard output.
    static func run(_ script: String, _ arguments: [String] = [], timeout: Duration = .seconds(30)) async throws -> String {
        let (process, output, cleanup) = try start(script, arguments)
        defer { cleanup() }
        let status = await process.wait(timeout: timeout)
        if status == nil { process.kill() }
        let errors = (try? String(contentsOfFile: (output as NSString).deletingLastPathComponent + "/err.txt", encoding: .utf8)) ?? ""
        try #require(status == 0, "python3 exited with \(String(describing: status)): \(errors.suffix(2_000))")
        return (try? String(contentsOfFile: output, encoding: .utf8)) ?? ""
    }
}
