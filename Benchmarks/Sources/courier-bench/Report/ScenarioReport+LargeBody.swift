/// The table of the large-body scenarios (12a–12c).
extension ScenarioReport {
    /// Bytes per second, CPU per GiB, and resident memory from the start of the measured phase
    /// to its peak, with the ratios to the blocking socket's copy and to AsyncHTTPClient.
    func largeBodyTable() -> Table {
        let blocking = summary(.blockingSocket)?.bytesPerSecond
        let ahc = summary(.asyncHTTPClient)?.bytesPerSecond
        var header = ["client", "throughput", "CPU per GiB", "RSS at start", "peak RSS", "growth"]
        if blocking != nil { header.append("× blocking socket") }
        if ahc != nil { header.append("× AHC") }
        var table = Table(title: scenario.title, header: header)
        let job = scenario.template
        let flight = job.concurrency == 1 ? "One request" : "\(job.concurrency) requests at once, one connection each,"
        table.subtitle.append("\(flight) per round after one small GET; \(scenario.rounds) interleaved rounds per client; medians over rounds, the largest growth of any round.")
        for summary in measured {
            var row = [summary.label, Format.throughput(bytesPerSecond: summary.bytesPerSecond),
                       Format.duration(summary.cpuPerGiB), Format.memory(kiB: summary.startResidentKiB.map { Int($0) }),
                       Format.memory(kiB: summary.peakResidentKiB), Format.memory(kiB: summary.peakGrowthKiB)]
            if let blocking { row.append(Format.ratio(summary.bytesPerSecond.map { $0 / blocking })) }
            if let ahc { row.append(Format.ratio(summary.bytesPerSecond.map { $0 / ahc })) }
            table.rows.append(row)
        }
        table.notes.append(notes)
        table.notes.append("- Growth: the process's peak resident memory (VmHWM, and VmRSS sampled every 20 ms) over its resident memory as the measured phase started. Every file is checked for its size after each round, then deleted.")
        return table
    }

    /// How each client moves the body in this scenario.
    private var notes: String {
        switch scenario.template.transfer {
        case .downloadToFile:
            "- Courier: `download(_:to:)` (a temporary file beside the destination, fsync and rename at the end; no digest asked for); AsyncHTTPClient: its `FileDownloadDelegate`; blocking socket: `read` from the socket and `write` to the file, 256 KiB at a time."
        case .uploadFromFile:
            "- Courier: a PUT with `.file(url)`; AsyncHTTPClient: a PUT whose body is `.stream` of 64 KiB `ByteBuffer`s read from the file, with its length; blocking socket: `read` from the file and `write` to the socket, 256 KiB at a time. nginx stores each upload (WebDAV PUT) before it answers."
        case .stream, nil:
            "- Courier: `stream(_:)`, each chunk counted and dropped; AsyncHTTPClient: `execute` and its response body's `AsyncSequence` of `ByteBuffer`s, the same."
        }
    }
}
