/// The table of the coalescing scenario (13).
extension ScenarioReport {
    /// How long 1,000 identical concurrent GETs took, and how many of them reached the server.
    func coalescingTable() -> Table {
        let ahc = summary(.asyncHTTPClient)?.elapsed
        var table = Table(title: scenario.title,
                          header: ["client", "all succeeded in", "requests the server saw", "CPU/req", "peak RSS", "× AHC"])
        table.subtitle.append("\(scenario.template.requestCount ?? 0) GETs of one URL started at once, as many connections allowed; "
                              + "median of \(scenario.rounds) rounds; a fresh process per round.")
        for summary in measured {
            let served = Set(summary.serverRequests).sorted().map(String.init).joined(separator: ", ")
            table.rows.append([summary.label, Format.duration(summary.elapsed), served.isEmpty ? "–" : served,
                               Format.duration(summary.cpuPerRequest), Format.memory(kiB: summary.peakResidentKiB),
                               Format.ratio(ahc.flatMap { ahc in summary.elapsed.map { ahc / $0 } })])
        }
        table.notes.append("- Courier with `coalescesRequests`: identical GETs in flight share one exchange, and each caller gets its own response. AsyncHTTPClient has no such option: each GET is its own request.")
        table.notes.append("- \"requests the server saw\" lists the distinct counts of the rounds (the bench server counts them); \"× AHC\" is AsyncHTTPClient's time divided by the client's.")
        return table
    }
}
