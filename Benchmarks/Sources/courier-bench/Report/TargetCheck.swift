/// The targets of the native-transport issue, checked against a run's reports.
struct TargetCheck: Sendable {
    /// The target in words.
    let target: String
    /// Met, not met, or `nil` when the run did not measure it.
    let met: Bool?
    /// The figures behind the verdict.
    let detail: String
    /// With `--repeat N`: how many of the N repeats met the target, when it was measured.
    var repeatsMet: (met: Int, of: Int)?

    /// Creates a verdict.
    init(target: String, met: Bool?, detail: String) {
        self.target = target
        self.met = met
        self.detail = detail
    }

    /// One verdict per target from the checks of every repeat (`perRepeat[i]` holds repeat i's
    /// checks, in the same order each time): met when most repeats met it, with the count of
    /// repeats that did. The figures shown are those of the middle repeat if it agrees with that
    /// verdict, else of the first repeat that does.
    static func combine(_ perRepeat: [[TargetCheck]]) -> [TargetCheck] {
        guard perRepeat.count > 1 else { return perRepeat.first ?? [] }
        let middle = perRepeat[perRepeat.count / 2]
        return middle.indices.map { index in
            let verdicts = perRepeat.compactMap { $0[index].met }
            guard !verdicts.isEmpty else { return middle[index] }
            let met = verdicts.count { $0 }
            let majority = met * 2 > verdicts.count
            let shown = middle[index].met == majority ? middle[index] : perRepeat.first { $0[index].met == majority }?[index] ?? middle[index]
            var check = TargetCheck(target: shown.target, met: majority, detail: shown.detail)
            check.repeatsMet = (met, verdicts.count)
            return check
        }
    }

    /// "met", "NOT MET", "met in 1 of 3 repeats" or "not measured".
    var verdict: String {
        guard let met else { return "not measured" }
        if let tally = repeatsMet, tally.met > 0, tally.met < tally.of {
            return "met in \(tally.met) of \(tally.of) repeats"
        }
        return met ? "met" : "NOT MET"
    }

    /// Every target, checked against `reports`.
    static func evaluate(_ reports: [ScenarioReport], soakRequests: Int, slowRequests: Int) -> [TargetCheck] {
        func report(_ name: String) -> ScenarioReport? { reports.first { $0.scenario.name == name } }
        var checks: [TargetCheck] = []

        let sequential = report("sequential")
        checks.append(ratio("Sequential ≥ 0.5× wrk", at: 0.5,
                            sequential?.summary(.courierNative)?.requestsPerSecond, sequential?.summary(.wrk)?.requestsPerSecond,
                            unit: { Format.rate($0) + " req/s" }, names: ("Courier", "wrk")))
        let concurrent = report("concurrent-16")
        checks.append(ratio("16 in flight ≥ 3× AsyncHTTPClient", at: 3,
                            concurrent?.summary(.courierNative)?.requestsPerSecond,
                            concurrent?.summary(.asyncHTTPClient)?.requestsPerSecond,
                            unit: { Format.rate($0) + " req/s" }, names: ("Courier", "AsyncHTTPClient")))
        checks.append(cpuCheck("CPU per request ≤ 3× a blocking-socket client", at: 3,
                               sequential?.summary(.courierNative), sequential?.summary(.blockingSocket),
                               names: ("Courier", "blocking socket")))

        if let soak = report("soak")?.summary(.courierNative), let growth = soak.residentGrowthKiB {
            let ran = soak.requests ?? 0
            let full = ran >= 1_000_000
            checks.append(TargetCheck(target: "Flat RSS over 1,000,000 requests",
                                      met: full ? soak.residentIsFlat : nil,
                                      detail: "\(Format.count(ran)) requests, \(Format.memory(kiB: soak.residentSamples.first)) → "
                                          + "\(Format.memory(kiB: soak.residentSamples.last)) (growth \(Format.memory(kiB: growth)))"
                                          + (full ? "" : "; fewer than 1,000,000 requests, not a verdict")))
        } else {
            checks.append(TargetCheck(target: "Flat RSS over 1,000,000 requests", met: nil, detail: "not run"))
        }

        if let slow = report("slow-server")?.summary(.courierNative), let threads = slow.peakThreads {
            let done = slow.requests ?? 0
            let full = slowRequests >= 10_000
            let met = done == slowRequests && !slow.timedOut && threads < 16
            checks.append(TargetCheck(target: "10,000 in flight against a slow server with < 16 threads",
                                      met: full ? met : nil,
                                      detail: "\(Format.count(done)) of \(Format.count(slowRequests)) in \(Format.duration(slow.elapsed)), "
                                          + "peak \(threads) threads, peak RSS \(Format.memory(kiB: slow.peakResidentKiB))"
                                          + (full ? "" : "; fewer than 10,000 in flight, not a verdict")))
        } else {
            checks.append(TargetCheck(target: "10,000 in flight against a slow server with < 16 threads", met: nil, detail: "not run"))
        }
        checks.append(memoryCheck(report("slow-server"), slowRequests: slowRequests))
        return checks + pipelineChecks(reports) + tlsChecks(reports) + http2Checks(reports)
    }

    /// Issue 20's memory target: at 10,000 in flight, at most 24 KiB per request over the
    /// process's resident memory as the phase started, and a peak no higher than AsyncHTTPClient's.
    static func memoryCheck(_ slow: ScenarioReport?, slowRequests: Int) -> TargetCheck {
        let target = "10,000 in flight: ≤ 24 KiB per request, peak RSS ≤ AsyncHTTPClient's"
        guard let courier = slow?.summary(.courierNative), let perRequest = courier.residentGrowthKiB(perRequestOf: slowRequests),
              let peak = courier.peakResidentKiB, let reference = slow?.summary(.asyncHTTPClient)?.peakResidentKiB else {
            return TargetCheck(target: target, met: nil, detail: "not run (needs courier-native and ahc in slow-server)")
        }
        let full = slowRequests >= 10_000
        let detail = String(format: "%.1f KiB per request; ", perRequest)
            + "peak \(Format.memory(kiB: peak)) against AsyncHTTPClient's \(Format.memory(kiB: reference))"
            + (full ? "" : "; fewer than 10,000 in flight, not a verdict")
        return TargetCheck(target: target, met: full ? perRequest <= 24 && peak <= reference : nil, detail: detail)
    }

    /// A check of `value / reference ≥ threshold`.
    static func ratio(_ target: String, at threshold: Double, _ value: Double?, _ reference: Double?,
                              unit: (Double) -> String, names: (String, String)) -> TargetCheck {
        guard let value, let reference, reference > 0 else { return TargetCheck(target: target, met: nil, detail: "not run") }
        let ratio = value / reference
        let detail = "\(names.0) \(unit(value)), \(names.1) \(unit(reference)): \(Format.ratio(ratio))"
        return TargetCheck(target: target, met: ratio >= threshold, detail: detail)
    }

    /// The checks as a table.
    static func table(_ checks: [TargetCheck]) -> Table {
        Table(title: "Targets of the native-transport issue, the performance issue (20), the HTTPS issue (23), the HTTP/2 issue (16) and the large-body issue (15)", header: ["target", "verdict", "measured"],
              rows: checks.map { [$0.target, $0.verdict, $0.detail] },
              textColumns: 3)
    }
}
