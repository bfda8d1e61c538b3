/// The targets of the HTTP/2 issue (16), checked against a run's reports.
extension TargetCheck {
    /// The HTTP/2 targets: 256 requests in flight on one connection at ≥ 1.5× AsyncHTTPClient
    /// and ≥ 0.5× h2load, and flat resident memory over 1,000,000 HTTP/2 requests. A ratio
    /// counts only when the server saw Courier's requests as HTTP/2 (no silent fallback).
    static func http2Checks(_ reports: [ScenarioReport]) -> [TargetCheck] {
        let rate = { (value: Double) in Format.rate(value) + " req/s" }
        let multiplexed = reports.first { $0.scenario.name == "h2-concurrent-256" }
        let courier = multiplexed?.summary(.courierNative)
        var checks = [
            ratio("HTTP/2, 256 in flight on one connection ≥ 1.5× AsyncHTTPClient", at: 1.5, courier?.requestsPerSecond,
                  multiplexed?.summary(.asyncHTTPClient)?.requestsPerSecond, unit: rate, names: ("Courier", "AsyncHTTPClient")),
            ratio("HTTP/2, 256 in flight on one connection ≥ 0.5× h2load", at: 0.5, courier?.requestsPerSecond,
                  multiplexed?.summary(.h2load)?.requestsPerSecond, unit: rate, names: ("Courier", "h2load")),
        ]
        if let courier, courier.protocolDescription != "HTTP/2.0" {
            checks = checks.map { check in
                TargetCheck(target: check.target, met: check.met == nil ? nil : false,
                            detail: check.detail + "; but the server saw Courier's requests as \(courier.protocolDescription ?? "unknown"), not HTTP/2.0")
            }
        }
        checks.append(soakCheck(reports.first { $0.scenario.name == "h2-soak" }?.summary(.courierNative)))
        return checks
    }

    /// Flat resident memory over a full-length HTTP/2 soak (the rule of ``ClientSummary/residentIsFlat``).
    private static func soakCheck(_ soak: ClientSummary?) -> TargetCheck {
        let target = "Flat RSS over 1,000,000 HTTP/2 requests"
        guard let soak, let growth = soak.residentGrowthKiB else { return TargetCheck(target: target, met: nil, detail: "not run") }
        let ran = soak.requests ?? 0
        let full = ran >= 1_000_000 && soak.protocolDescription == "HTTP/2.0"
        let detail = "\(Format.count(ran)) requests (\(soak.protocolDescription ?? "protocol unknown"), "
            + "\(soak.connections.map(String.init) ?? "?") connection(s)), \(Format.memory(kiB: soak.residentSamples.first)) → "
            + "\(Format.memory(kiB: soak.residentSamples.last)) (growth \(Format.memory(kiB: growth)))"
            + (full ? "" : "; fewer than 1,000,000 HTTP/2 requests, not a verdict")
        return TargetCheck(target: target, met: full ? soak.residentIsFlat : nil, detail: detail)
    }
}
