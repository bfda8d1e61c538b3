/// The targets of issue 15's large-body benchmarks.
extension TargetCheck {
    /// The checks of scenarios 12a–12c: a 4 GiB download to a file and upload from a file with
    /// peak RSS growth under 32 MiB and at least 0.8× the blocking socket's throughput, and 100
    /// concurrent streamed downloads of 100 MiB with growth under 256 MiB. Runs with smaller
    /// sizes (`--quick`, `--large-mib`) are reported without a verdict.
    static func largeBodyChecks(_ reports: [ScenarioReport], options: BenchOptions) -> [TargetCheck] {
        func report(_ name: String) -> ScenarioReport? { reports.first { $0.scenario.name == name } }
        let fullSize = options.largeBytes >= 4 << 30
        var checks: [TargetCheck] = []
        for (name, what) in [("download-to-file", "download to a file"), ("upload-from-file", "upload from a file")] {
            let scenario = report(name)
            checks.append(growth("4 GiB \(what): peak RSS growth < 32 MiB", scenario?.summary(.courierNative),
                                 limitMiB: 32, verdict: fullSize))
            var speed = ratio("4 GiB \(what): ≥ 0.8× the blocking socket", at: 0.8,
                              scenario?.summary(.courierNative)?.bytesPerSecond, scenario?.summary(.blockingSocket)?.bytesPerSecond,
                              unit: { Format.throughput(bytesPerSecond: $0) }, names: ("Courier", "blocking socket"))
            if !fullSize, speed.met != nil { speed = TargetCheck(target: speed.target, met: nil, detail: speed.detail + "; smaller than 4 GiB, not a verdict") }
            checks.append(speed)
        }
        let streams = options.streamCount >= 100 && options.streamBytes >= 100 << 20
        checks.append(growth("100 concurrent 100 MiB streamed downloads: RSS growth < 256 MiB",
                             report("streams")?.summary(.courierNative), limitMiB: 256, verdict: streams))
        return checks
    }

    /// A check of a client's largest growth of resident memory against `limitMiB`.
    private static func growth(_ target: String, _ summary: ClientSummary?, limitMiB: Int, verdict: Bool) -> TargetCheck {
        guard let summary, let growth = summary.peakGrowthKiB, let peak = summary.peakResidentKiB else {
            return TargetCheck(target: target, met: nil, detail: "not run")
        }
        let detail = "Courier grew \(Format.memory(kiB: growth)) (peak \(Format.memory(kiB: peak)))"
            + (verdict ? "" : "; smaller sizes than the target's, not a verdict")
        return TargetCheck(target: target, met: verdict ? growth < limitMiB << 10 : nil, detail: detail)
    }
}
