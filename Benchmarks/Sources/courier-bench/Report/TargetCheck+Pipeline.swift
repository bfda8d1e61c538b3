/// The targets of the performance issue (20), checked against a run's reports.
extension TargetCheck {
    /// Issue 20's targets: throughput against wrk and AsyncHTTPClient at 1, 16 and 256 in flight,
    /// CPU per request against a blocking socket, and the pipeline's CPU over the bare transport,
    /// on a plain connection (`sequential`) and with the full pipeline (`pipeline`).
    static func pipelineChecks(_ reports: [ScenarioReport]) -> [TargetCheck] {
        let rate = { (value: Double) in Format.rate(value) + " req/s" }
        var checks: [TargetCheck] = []
        for (name, title, reference, threshold) in [
            ("sequential", "Sequential ≥ 0.6× wrk (20)", ClientKind.wrk, 0.6),
            ("concurrent-16", "16 in flight ≥ 0.75× wrk (20)", .wrk, 0.75),
            ("concurrent-16", "16 in flight ≥ 1.8× AsyncHTTPClient (20)", .asyncHTTPClient, 1.8),
            ("concurrent-256", "256 in flight ≥ 1.5× AsyncHTTPClient (20)", .asyncHTTPClient, 1.5),
        ] {
            checks.append(ratio(title, at: threshold, reports.summary(name, .courierNative)?.requestsPerSecond,
                                reports.summary(name, reference)?.requestsPerSecond, unit: rate,
                                names: ("Courier", reference.title)))
        }
        checks.append(cpuCheck("CPU per request ≤ 1.6× a blocking-socket client (20)", at: 1.6,
                               reports.summary("sequential", .courierNative), reports.summary("sequential", .blockingSocket),
                               names: ("Courier", "blocking socket")))
        checks.append(overBareCheck("Pipeline CPU over the bare transport, plain connection ≤ 20 µs (20)", limit: 20e-6,
                                    reports.summary("sequential", .courierNative), reports.summary("sequential", .nativeBare),
                                    alone: reports.summary("pipeline", .pipelineAlone), needs: "`sequential` with native-bare"))
        checks.append(overBareCheck("Pipeline CPU over the bare transport, full pipeline ≤ 40 µs (20)", limit: 40e-6,
                                    reports.summary("pipeline", .courierNative), reports.summary("pipeline", .nativeBare),
                                    alone: reports.summary("pipeline", .pipelineAloneFull), needs: "`pipeline`"))
        return checks
    }

    /// A check of `value`'s CPU per request ≤ `threshold` × `reference`'s.
    static func cpuCheck(_ target: String, at threshold: Double, _ value: ClientSummary?, _ reference: ClientSummary?,
                         names: (String, String)) -> TargetCheck {
        guard let courier = value?.cpuPerRequest, let base = reference?.cpuPerRequest, base > 0 else {
            return TargetCheck(target: target, met: nil, detail: "not run")
        }
        return TargetCheck(target: target, met: courier <= threshold * base,
                           detail: "\(names.0) \(Format.duration(courier)), \(names.1) \(Format.duration(base)): \(Format.ratio(courier / base))")
    }

    /// A check of the CPU per request `full` spends over `bare`, at most `limit` seconds. The
    /// detail adds the CPU per request of the same pipeline with no socket (`alone`) when it ran:
    /// the pipeline's own cost, without the network's noise (the verdict stays on the difference).
    private static func overBareCheck(_ target: String, limit: Double, _ full: ClientSummary?, _ bare: ClientSummary?,
                                      alone: ClientSummary?, needs: String) -> TargetCheck {
        guard let pipeline = full?.cpuPerRequest, let transport = bare?.cpuPerRequest else {
            return TargetCheck(target: target, met: nil, detail: "not run (needs \(needs))")
        }
        let over = pipeline - transport
        var detail = "Courier \(Format.duration(pipeline)), NativeTransport bare \(Format.duration(transport)): +\(Format.duration(over))"
        if let own = alone?.cpuPerRequest { detail += "; the pipeline alone, no socket: \(Format.duration(own))" }
        return TargetCheck(target: target, met: over <= limit, detail: detail)
    }
}
