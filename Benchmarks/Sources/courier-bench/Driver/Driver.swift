import Foundation

/// The driver side of `courier-bench`: starts the servers, runs every selected scenario for
/// every client in interleaved rounds (each run in a worker process of its own, or wrk or h2load), prints
/// each scenario's table as soon as it is done, then the targets, and stops every process.
struct Driver {
    let options: BenchOptions

    /// Runs the benchmark.
    /// - Returns: the process exit status.
    func run() async -> Int32 {
        ChildRegistry.shared.trapSignals()
        defer { ChildRegistry.shared.terminateAll() }
        do {
            let scenarios = try ScenarioCatalog.selected(options)
            let runFolder = try BuildFolder.folder("bench-run")
            let files = runFolder.appendingPathComponent("www", isDirectory: true)
            try StaticFiles.write(into: files)
            let large = try LargeFiles(bigBytes: options.largeBytes, mediumBytes: options.streamBytes)
            ChildRegistry.shared.removeOnInterrupt(large.folder)
            defer { large.remove() }
            if scenarios.contains(where: { $0.kind == .largeBody }) {
                progress("writing the large-body files (\(Format.size(bytes: large.bigBytes)) and \(Format.size(bytes: large.mediumBytes))) in \(large.folder.path)")
                try large.writeFiles()
            }
            let servers = try Servers(files: files, folder: runFolder, large: large)
            defer { servers.stop() }
            let wrk = WrkRunner.locate(folder: runFolder)
            let h2load = H2loadRunner.locate(folder: runFolder)
            let loadBefore = MachineInfo.loadAverage
            var output = header(servers: servers, wrk: wrk, h2load: h2load, courier: CourierRevision.describe(folder: runFolder))
            print(output)
            var reports: [ScenarioReport] = []
            var repeated: [[ScenarioReport]] = []
            for scenario in scenarios {
                var runs: [ScenarioReport] = []
                for _ in 1...options.repeats {
                    var report = try await run(scenario, servers: servers, generators: (wrk, h2load), folder: runFolder, large: large)
                    report.load.after = MachineInfo.loadAverages
                    var text = report.table().markdown()
                    text += "\nLoad average (1, 5, 15 min): \(format(report.load.before)) before, \(format(report.load.after)) after.\n"
                    if let warning = report.loadWarning { text += warning + "\n" }
                    print(text)
                    output += text + "\n"
                    runs.append(report)
                }
                reports.append(runs[runs.count / 2])
                repeated.append(runs)
            }
            if options.repeats > 1 {
                let text = RepeatSummary.table(repeated).markdown()
                print(text)
                output += text + "\n"
            }
            // Every repeat is checked; the verdict counts the repeats that met each target (see
            // `TargetCheck.combine`).
            let checks = TargetCheck.combine((0..<options.repeats).map { index in
                let reports = repeated.map { $0[index] }
                return TargetCheck.evaluate(reports, soakRequests: options.soakRequests, slowRequests: options.slowRequests)
                    + TargetCheck.largeBodyChecks(reports, options: options) + [TargetCheck.coalescingCheck(reports)]
            })
            let targets = TargetCheck.table(checks).markdown()
            let footer = "Load average (1, 5, 15 min): \(loadBefore) before, \(MachineInfo.loadAverage) after.\n"
            print(targets + "\n" + footer)
            output += targets + "\n" + footer
            if let path = options.markdownPath {
                try output.write(toFile: path, atomically: true, encoding: .utf8)
                progress("wrote \(path)")
            }
            return 0
        } catch {
            FileHandle.standardError.write(Data("courier-bench: \(error)\n".utf8))
            return 1
        }
    }

    /// Runs every round of one scenario.
    private func run(_ scenario: Scenario, servers: Servers, generators: (wrk: WrkRunner?, h2load: H2loadRunner?),
                     folder: URL, large: LargeFiles) async throws -> ScenarioReport {
        guard let (baseURL, description) = servers.server(for: scenario.server) else {
            let missing = scenario.server == .largeFiles ? "needs nginx" : "HTTPS needs nginx and openssl"
            var report = ScenarioReport(scenario: scenario, serverDescription: "none: \(missing)")
            for client in scenario.clients { report.record(client, .failure(BenchError("no server: \(missing)"))) }
            return report
        }
        var report = ScenarioReport(scenario: scenario, serverDescription: description)
        report.load.before = MachineInfo.loadAverages
        for round in 1...scenario.rounds {
            for client in scenario.clients where !ChildRegistry.shared.isStopping {
                let job = scenario.job(for: client, baseURL: baseURL,
                                       resultPath: folder.appendingPathComponent("result.json").path,
                                       trustedCAPath: servers.certificates?.caPath, large: large)
                if let transfer = job.transfer, transfer != .stream { try large.touchMemory(bytes: large.bigBytes) }
                let outcome = measure(job, generators: generators)
                if scenario.kind == .largeBody { large.removeOutputs() }
                report.record(client, outcome)
                progress("\(scenario.name) round \(round)/\(scenario.rounds) \(client.rawValue): " + describe(outcome))
            }
        }
        return report
    }

    /// Load averages as `/proc/loadavg` prints them.
    private func format(_ load: [Double]) -> String {
        load.map { String(format: "%.2f", $0) }.joined(separator: " ")
    }

    /// One run of one client: wrk or h2load as a child, anything else in a worker process.
    private func measure(_ job: WorkerJob, generators: (wrk: WrkRunner?, h2load: H2loadRunner?)) -> Result<WorkerResult, BenchError> {
        if job.client == .wrk {
            guard let wrk = generators.wrk else { return .failure(BenchError("wrk is not installed: apt-get install wrk")) }
            return Result { try wrk.run(job) }.mapError { $0 as? BenchError ?? BenchError("\($0)") }
        }
        if job.client == .h2load {
            guard let h2load = generators.h2load else {
                return .failure(BenchError("h2load is not installed: apt-get install nghttp2-client"))
            }
            return Result { try h2load.run(job) }.mapError { $0 as? BenchError ?? BenchError("\($0)") }
        }
        do {
            try? FileManager.default.removeItem(atPath: job.resultPath)
            let json = String(decoding: try JSONEncoder().encode(job), as: UTF8.self)
            let executable = BuildFolder.executableDirectory.appendingPathComponent("courier-bench").path
            let command = WorkerCommand(job: job, executable: executable, json: json)
            let worker = try ChildProcess(command.path, command.arguments)
            let limit = (job.isCounted ? job.timeLimit : job.duration + job.timeLimit) + 60
            guard let exit = worker.wait(timeout: limit) else {
                worker.stop()
                return .failure(BenchError("the worker did not finish within \(Int(limit)) s and was stopped"))
            }
            guard exit.status == 0 else { return .failure(BenchError("the worker exited with status \(exit.status)")) }
            let data = try Data(contentsOf: URL(fileURLWithPath: job.resultPath))
            return .success(try JSONDecoder().decode(WorkerResult.self, from: data))
        } catch {
            return .failure(error as? BenchError ?? BenchError("\(error)"))
        }
    }

    private func describe(_ outcome: Result<WorkerResult, BenchError>) -> String {
        switch outcome {
        case .success(let result):
            var text = "\(Format.count(result.requests)) ok in \(Format.duration(result.elapsed)) (\(Format.rate(result.requestsPerSecond)) req/s)"
            if result.bytes > 0 {
                text += ", \(Format.throughput(bytesPerSecond: result.bytesPerSecond)), RSS \(Format.memory(kiB: result.startResidentKiB)) → peak \(Format.memory(kiB: result.peakResidentKiB))"
            }
            if result.errors > 0 { text += ", \(result.errors) failed: \(result.firstError ?? "?")" }
            if let tokens = result.tokenRequests { text += ", \(tokens) token requests" }
            return text
        case .failure(let error):
            return "FAILED: \(error)"
        }
    }

    private func header(servers: Servers, wrk: WrkRunner?, h2load: H2loadRunner?, courier: String) -> String {
        let date = Date().formatted(.iso8601)
        var lines = [
            "## Courier benchmarks",
            "",
            "- Date: \(date)",
            "- Machine: \(MachineInfo.summary); load average \(MachineInfo.loadAverage) at the start",
            "- Command: `swift run -c release --package-path Benchmarks courier-bench\(options.commandLine.map { " " + $0 }.joined())`",
            "- Courier: \(courier), release build",
            "- Static files: \(servers.filesDescription)",
            "- Server logic (auth storm, 1 s delay): \(servers.logicDescription)",
            "- wrk: " + (wrk.map { "\($0.version) (\($0.path))" } ?? "not installed (`apt-get install wrk`); its rows are left out"),
            "- h2load: " + (h2load.map { "\($0.version) (\($0.path))" }
                ?? "not installed (`apt-get install nghttp2-client`); its rows in the HTTP/2 scenarios say so"),
            "",
        ]
        if servers.nginx == nil {
            lines.insert("> nginx was not found: CourierTestServer (bench-server) serves the static files instead.\n", at: 2)
        }
        return lines.joined(separator: "\n") + "\n"
    }

    private func progress(_ text: String) {
        FileHandle.standardError.write(Data(("  " + text + "\n").utf8))
    }
}
