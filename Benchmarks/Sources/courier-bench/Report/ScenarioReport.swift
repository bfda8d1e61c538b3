/// What one scenario measured, client by client.
struct ScenarioReport: Sendable {
    /// The scenario.
    let scenario: Scenario
    /// Who served it, in words.
    let serverDescription: String
    /// One summary per client, in the scenario's order.
    var summaries: [ClientSummary]

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
