/// The target of issue 20's request coalescing.
extension TargetCheck {
    /// 1,000 identical concurrent GETs through Courier with `coalescesRequests` make one request
    /// to the server, in every round.
    static func coalescingCheck(_ reports: [ScenarioReport]) -> TargetCheck {
        let target = "1,000 identical concurrent GETs, coalescing on: 1 request reaches the server"
        guard let courier = reports.first(where: { $0.scenario.name == "coalescing" })?.summary(.courierNative),
              !courier.serverRequests.isEmpty else {
            return TargetCheck(target: target, met: nil, detail: "not run")
        }
        let counts = courier.serverRequests
        return TargetCheck(target: target, met: counts.allSatisfy { $0 == 1 } && courier.errors == 0,
                           detail: "server requests per round: \(counts.map(String.init).joined(separator: ", ")); "
                               + "\(courier.errors) failed; all done in \(Format.duration(courier.elapsed))")
    }
}
