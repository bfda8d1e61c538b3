/// What one scenario measured, client by client.
struct ScenarioReport: Sendable {
    /// The scenario.
    let scenario: Scenario
    /// Who served it, in words.
    let serverDescription: String
    /// One summary per client, in the scenario's order.
    var summaries: [ClientSummary]
    /// The 1, 5 and 15 minute load averages before and after the scenario ran.
    var load: (before: [Double], after: [Double]) = ([], [])

    /// A warning when the machine was busy (a 1-minute load average above 1.0, before or after):
    /// the ratios are then less trustworthy than on a quiet machine.
    var loadWarning: String? {
        let busiest = [load.before.first, load.after.first].compactMap { $0 }.max() ?? 0
        guard busiest > 1.0 else { return nil }
        return "- ⚠ Load average above 1.0 (\(String(format: "%.2f", busiest))): other work shared the machine; compare ratios, not absolute figures, and prefer `--repeat`."
    }

    /// The ratio of `client`'s requests per second to `reference`'s, if both ran.
    func throughputRatio(_ client: ClientKind, to reference: ClientKind) -> Double? {
        guard let value = summary(client)?.requestsPerSecond, let base = summary(reference)?.requestsPerSecond, base > 0 else { return nil }
        return value / base
    }

    /// Creates an empty report.
    init(scenario: Scenario, serverDescription: String) {
        self.scenario = scenario
        self.serverDescription = serverDescription
        summaries = scenario.clients.map { ClientSummary(client: $0, label: scenario.label(for: $0)) }
    }

    /// The summary of `client`, if it ran.
    func summary(_ client: ClientKind) -> ClientSummary? {
        summaries.first { $0.client == client && !$0.results.isEmpty }
    }

    /// Records one round's result, or why there is none.
    mutating func record(_ client: ClientKind, _ outcome: Result<WorkerResult, BenchError>) {
        guard let index = summaries.firstIndex(where: { $0.client == client }) else { return }
        switch outcome {
        case .success(let result): summaries[index].results.append(result)
        case .failure(let error): summaries[index].failures.append(error.description)
        }
    }
}

extension [ScenarioReport] {
    /// The summary of `client` in the scenario named `name`, when the run has both.
    func summary(_ name: String, _ client: ClientKind) -> ClientSummary? {
        first { $0.scenario.name == name }?.summary(client)
    }
}
