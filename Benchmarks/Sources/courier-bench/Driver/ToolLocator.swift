import Foundation

/// Finds the command-line tools the benchmark drives (wrk, h2load) and reads their versions.
enum ToolLocator {
    /// The first executable named `name` in `/usr/bin`, `/usr/local/bin`, then `PATH`.
    static func executable(named name: String) -> String? {
        let path = ProcessInfo.processInfo.environment["PATH"] ?? ""
        let candidates = ["/usr/bin/\(name)", "/usr/local/bin/\(name)"] + path.split(separator: ":").map { "\($0)/\(name)" }
        return candidates.first { FileManager.default.isExecutableFile(atPath: $0) }
    }

    /// What `executable arguments` prints (standard output and error together, trimmed), written
    /// to `file` in `folder`; empty when it cannot run or says nothing within 5 s.
    static func output(of executable: String, _ arguments: [String], folder: URL, file: String) -> String {
        let output = folder.appendingPathComponent(file).path
        guard let child = try? ChildProcess(executable, arguments, standardOutput: output, standardError: output) else { return "" }
        _ = child.wait(timeout: 5)
        let text = (try? String(contentsOfFile: output, encoding: .utf8)) ?? ""
        return text.trimmingCharacters(in: .whitespacesAndNewlines)
    }
}
