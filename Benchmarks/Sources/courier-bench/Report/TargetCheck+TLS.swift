/// The targets of the HTTPS issue (23), checked against a run's reports.
extension TargetCheck {
    /// The HTTPS targets: new connections with tickets ≥ 1.3× AsyncHTTPClient; full handshakes
    /// ≥ 1.0× with no more CPU per handshake; keep-alive at 1 and 16 in flight ≥ 1.5× with a TLS
    /// overhead of at most 15% over the same scenario in plain HTTP.
    static func tlsChecks(_ reports: [ScenarioReport]) -> [TargetCheck] {
        let rate = { (value: Double) in Format.rate(value) + " req/s" }
        var checks: [TargetCheck] = []
        for (name, title, threshold) in [("tls-new-connection", "HTTPS new connection per request, tickets on ≥ 1.3× AsyncHTTPClient", 1.3),
                                         ("tls-full-handshake", "HTTPS full handshake per request ≥ 1.0× AsyncHTTPClient", 1.0),
                                         ("tls-sequential", "HTTPS keep-alive, 1 in flight ≥ 1.5× AsyncHTTPClient", 1.5),
                                         ("tls-concurrent-16", "HTTPS keep-alive, 16 in flight ≥ 1.5× AsyncHTTPClient", 1.5)] {
            checks.append(ratio(title, at: threshold, reports.summary(name, .courierNative)?.requestsPerSecond,
                                reports.summary(name, .asyncHTTPClient)?.requestsPerSecond, unit: rate, names: ("Courier", "AsyncHTTPClient")))
        }
        let cpuTarget = "HTTPS full handshake: CPU per handshake ≤ AsyncHTTPClient's"
        if let courier = reports.summary("tls-full-handshake", .courierNative)?.cpuPerRequest,
           let ahc = reports.summary("tls-full-handshake", .asyncHTTPClient)?.cpuPerRequest, ahc > 0 {
            checks.append(TargetCheck(target: cpuTarget, met: courier <= ahc,
                                      detail: "Courier \(Format.duration(courier)), AsyncHTTPClient \(Format.duration(ahc)): \(Format.ratio(courier / ahc))"))
        } else {
            checks.append(TargetCheck(target: cpuTarget, met: nil, detail: "not run"))
        }
        for (tls, plain, title) in [("tls-sequential", "sequential", "TLS overhead ≤ 15%, keep-alive, 1 in flight"),
                                    ("tls-concurrent-16", "concurrent-16", "TLS overhead ≤ 15%, keep-alive, 16 in flight")] {
            guard let secure = reports.summary(tls, .courierNative)?.requestsPerSecond,
                  let clear = reports.summary(plain, .courierNative)?.requestsPerSecond, secure > 0 else {
                checks.append(TargetCheck(target: title, met: nil, detail: "not run (needs `\(plain)` and `\(tls)` in one run)"))
                continue
            }
            // Time per request over HTTPS against plain HTTP, minus one.
            let overhead = clear / secure - 1
            checks.append(TargetCheck(target: title, met: overhead <= 0.15,
                                      detail: "Courier \(rate(clear)) plain, \(rate(secure)) HTTPS: \(Format.percent(overhead)) more time per request"))
        }
        return checks
    }
}
