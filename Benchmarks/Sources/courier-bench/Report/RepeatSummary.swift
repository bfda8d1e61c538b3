/// The table that `--repeat N` adds: for each scenario and client, the median over the repeats
/// of its throughput ratio to AsyncHTTPClient and to the scenario's load generator in C (wrk,
/// or h2load over HTTP/2), with the lowest and highest, so that
/// one noisy repeat does not decide a verdict.
enum RepeatSummary {
    /// The table for `runs`: one list of reports per scenario, one report per repeat.
    static func table(_ runs: [[ScenarioReport]]) -> Table {
        var table = Table(title: "Median ratios over \(runs.first?.count ?? 0) repeats",
                          header: ["scenario", "client", "× AHC (median, range)", "× wrk or h2load (median, range)"], textColumns: 2)
        for reports in runs {
            guard let scenario = reports.first?.scenario else { continue }
            for client in scenario.clients where client != .asyncHTTPClient && !client.isLoadGenerator {
                let versusAHC = reports.compactMap { $0.throughputRatio(client, to: .asyncHTTPClient) }
                let versusWrk = reports.compactMap { $0.throughputRatio(client, to: scenario.ceiling) }
                guard !versusAHC.isEmpty || !versusWrk.isEmpty else { continue }
                table.rows.append([scenario.name, scenario.label(for: client), describe(versusAHC), describe(versusWrk)])
            }
        }
        table.notes.append("- Each repeat runs the scenario's interleaved rounds again; the scenario's own tables above show each repeat.")
        return table
    }

    /// "1.12× (1.05–1.20×)", or "–" when not measured.
    private static func describe(_ ratios: [Double]) -> String {
        guard let low = ratios.min(), let high = ratios.max(), let median = Statistics.median(ratios) else { return "–" }
        return "\(Format.ratio(median)) (\(Format.ratio(low))–\(Format.ratio(high)))"
    }
}
