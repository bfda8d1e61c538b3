import Foundation

/// h2load, nghttp2's HTTP/2 load generator written in C, as the ceiling of the HTTP/2
/// scenarios (as wrk is for HTTP/1.1): started as a child for one timed run on one connection
/// with `job.concurrency` streams in flight, its report parsed into a ``WorkerResult`` (CPU and
/// peak memory from `wait4`). h2load verifies no certificate.
struct H2loadRunner {
    /// The executable.
    let path: String
    /// What `h2load --version` said, e.g. `h2load nghttp2/1.52.0`.
    let version: String
    /// Where its reports are written.
    let folder: URL

    /// h2load if it is installed (Debian's `nghttp2-client`).
    static func locate(folder: URL) -> H2loadRunner? {
        guard let executable = ToolLocator.executable(named: "h2load") else { return nil }
        let text = ToolLocator.output(of: executable, ["--version"], folder: folder, file: "h2load-version.txt")
        let version = text.isEmpty ? "h2load" : text
        return H2loadRunner(path: executable, version: version, folder: folder)
    }

    /// Runs h2load for `job`: one client thread, one connection, `job.concurrency` streams at
    /// once (`-m`), a one-second warm-up, then `job.duration` seconds (whole seconds) measured.
    /// - Throws: ``BenchError`` when h2load fails or its report cannot be read.
    func run(_ job: WorkerJob) throws -> WorkerResult {
        let seconds = max(1, Int(job.duration.rounded()))
        let arguments = ["-t1", "-c1", "-m\(job.concurrency)", "-D\(seconds)", "--warm-up-time=1", job.url]
        let report = folder.appendingPathComponent("h2load-report.txt").path
        let child = try ChildProcess(path, arguments, standardOutput: report, standardError: report)
        let text = { (try? String(contentsOfFile: report, encoding: .utf8)) ?? "" }
        guard let exit = child.wait(timeout: Double(seconds) + 30) ?? child.stop(), exit.status == 0 else {
            throw BenchError("h2load failed: \(text().suffix(800))")
        }
        var result = try Self.parse(text())
        result.cpuSeconds = exit.cpuSeconds
        result.contextSwitches = exit.contextSwitches
        result.peakResidentKiB = exit.peakResidentKiB
        result.peakThreads = 1
        return result
    }

    /// Reads h2load's report: `finished in Xs, Y req/s`, the `requests:` counts and the
    /// negotiated `Application protocol:`. h2load gives no latency percentiles.
    /// - Throws: ``BenchError`` when the counts are missing.
    static func parse(_ report: String) throws -> WorkerResult {
        var result = WorkerResult()
        var finished = false
        var counted = false
        for line in report.split(separator: "\n").map({ $0.trimmingCharacters(in: .whitespaces) }) {
            let words = line.split(separator: " ", omittingEmptySubsequences: true).map { $0.trimmingCharacters(in: [","]) }
            if line.hasPrefix("finished in"), words.count >= 3 {
                result.elapsed = WrkRunner.seconds(words[2]) ?? 0
                finished = true
            } else if line.hasPrefix("requests:") {
                // requests: T total, S started, D done, OK succeeded, F failed, E errored, X timeout
                for (index, word) in words.enumerated() where index > 0 {
                    guard let count = Int(words[index - 1]) else { continue }
                    switch word {
                    case "succeeded": result.requests = count; counted = true
                    case "failed": result.errors += count  // errored and timeout are part of it
                    default: break
                    }
                }
            } else if line.hasPrefix("Application protocol:"), let name = words.last {
                result.protocolDescription = "\(name) (h2load's ALPN)"
            }
        }
        guard finished, counted else { throw BenchError("cannot read h2load's report:\n\(report)") }
        if result.protocolDescription != nil { result.connections = 1 }
        return result
    }
}
