import Foundation

/// The `bench-server` executable (CourierTestServer) in a process of its own, so that the
/// server never shares the measured client's threads or CPU account. It serves the scenarios
/// that need server logic (the auth storm's 401s and tokens, the 1 s delay) and, when nginx is
/// missing, the static files.
final class BenchServerProcess {
    /// `http://127.0.0.1:<port>`.
    let baseURL: URL
    private let process: ChildProcess

    /// Starts `bench-server` from the executable's folder, serving `files`.
    /// - Throws: ``BenchError`` when it does not start or report its port within 10 s.
    init(files: URL, folder: URL) throws {
        let executable = BuildFolder.executableDirectory.appendingPathComponent("bench-server").path
        let output = folder.appendingPathComponent("bench-server.out").path
        try? FileManager.default.removeItem(atPath: output)
        process = try ChildProcess(executable, ["--files", files.path], standardOutput: output)
        var port: Int?
        let deadline = Nanoseconds.now() &+ 10_000_000_000
        while port == nil, process.isRunning, Nanoseconds.now() < deadline {
            let text = (try? String(contentsOfFile: output, encoding: .utf8)) ?? ""
            port = text.split(separator: "\n").first { $0.hasPrefix("PORT ") }.flatMap { Int($0.dropFirst(5)) }
            if port == nil { usleep(20_000) }
        }
        guard let port, let url = URL(string: "http://127.0.0.1:\(port)") else {
            process.stop()
            throw BenchError("bench-server did not report its port; is it built? Run Benchmarks/run.sh, or first "
                             + "`swift build -c release --package-path Benchmarks --product bench-server` (\(executable))")
        }
        baseURL = url
    }

    /// Stops the server.
    func stop() {
        process.stop()
    }
}
