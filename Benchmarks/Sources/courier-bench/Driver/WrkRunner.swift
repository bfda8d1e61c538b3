import Foundation

/// wrk, the C load generator, as the ceiling of the static scenarios: started as a child for
/// one timed run, its report parsed into a ``WorkerResult`` (CPU and peak memory from `wait4`).
struct WrkRunner {
    /// The executable.
    let path: String
    /// What `wrk -v` said, e.g. `wrk 4.1.0`.
    let version: String
    /// Where reports and scripts are written.
    let folder: URL

    /// wrk if it is installed.
    static func locate(folder: URL) -> WrkRunner? {
        guard let executable = ToolLocator.executable(named: "wrk") else { return nil }
        let text = ToolLocator.output(of: executable, ["-v"], folder: folder, file: "wrk-version.txt")
        let version = text.isEmpty ? "wrk" : text.split(separator: " ").prefix(2).joined(separator: " ")
        return WrkRunner(path: executable, version: version, folder: folder)
    }

    /// Runs wrk for `job`: its URL, duration, method and body, `job.concurrency` connections.
    /// - Throws: ``BenchError`` when wrk fails or its report cannot be read.
    func run(_ job: WorkerJob) throws -> WorkerResult {
        let threads = job.concurrency > 1 ? 2 : 1
        var arguments = ["-t\(threads)", "-c\(job.concurrency)", "-d\(max(1, Int(job.duration.rounded())))s",
                         "--latency", "--timeout", "10s"]
        if job.newConnectionPerRequest { arguments += ["-H", "Connection: close"] }
        if job.method == "POST" {
            let script = folder.appendingPathComponent("post-\(job.bodyBytes).lua")
            let body = String(decoding: Worker.jsonBody(bytes: job.bodyBytes), as: UTF8.self)
            try """
            wrk.method = "POST"
            wrk.body = '\(body)'
            wrk.headers["Content-Type"] = "application/json"

            """.write(to: script, atomically: true, encoding: .utf8)
            arguments += ["-s", script.path]
        }
        arguments.append(job.url)
        let report = folder.appendingPathComponent("wrk-report.txt").path
        let child = try ChildProcess(path, arguments, standardOutput: report, standardError: report)
        guard let exit = child.wait(timeout: job.duration + 30) ?? child.stop(), exit.status == 0 else {
            throw BenchError("wrk failed: \((try? String(contentsOfFile: report, encoding: .utf8)) ?? "")")
        }
        var result = try Self.parse((try? String(contentsOfFile: report, encoding: .utf8)) ?? "")
        result.cpuSeconds = exit.cpuSeconds
        result.contextSwitches = exit.contextSwitches
        result.peakResidentKiB = exit.peakResidentKiB
        result.peakThreads = threads + 1
        return result
    }

    /// Reads wrk's report: `N requests in Xs`, the 50% and 99% latency lines, and errors.
    /// - Throws: ``BenchError`` when the request count is missing.
    static func parse(_ report: String) throws -> WorkerResult {
        var result = WorkerResult()
        var found = false
        for line in report.split(separator: "\n").map({ $0.trimmingCharacters(in: .whitespaces) }) {
            let words = line.split(separator: " ", omittingEmptySubsequences: true).map(String.init)
            if words.count >= 4, words[1] == "requests", words[2] == "in", let count = Int(words[0]) {
                result.requests = count
                result.elapsed = seconds(words[3].trimmingCharacters(in: [","])) ?? 0
                found = true
            } else if words.count == 2, words[0] == "50%" {
                result.latencyP50 = seconds(words[1])
            } else if words.count == 2, words[0] == "99%" {
                result.latencyP99 = seconds(words[1])
            } else if line.hasPrefix("Non-2xx or 3xx responses:"), let count = words.last.flatMap({ Int($0) }) {
                result.errors += count
            } else if line.hasPrefix("Socket errors:") {
                result.errors += words.compactMap { Int($0.trimmingCharacters(in: [","])) }.reduce(0, +)
            }
        }
        guard found else { throw BenchError("cannot read wrk's report:\n\(report)") }
        result.requests -= min(result.errors, result.requests)
        return result
    }

    /// `"31.20us"`, `"1.06ms"`, `"3.00s"`, `"1.00m"` in seconds.
    static func seconds(_ text: String) -> Double? {
        for (unit, scale) in [("us", 1e-6), ("ms", 1e-3), ("m", 60.0), ("s", 1.0)] where text.hasSuffix(unit) {
            return Double(text.dropLast(unit.count)).map { $0 * scale }
        }
        return Double(text)
    }
}
