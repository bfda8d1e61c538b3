import Foundation

/// What a careful user writes around a client without a re-authentication queue: one shared
/// bearer token, refreshed by exactly one token request when 401s arrive, however many
/// requests saw them at once. It gives the peers of the auth storm the contract that Courier's
/// queue keeps, so that their times can be compared.
actor TokenCoordinator {
    private let client: any BenchClient
    private let tokenURL: URL
    private var token: String?
    private var refresh: Task<String, any Error>?

    /// Creates the coordinator.
    /// - Parameters:
    ///   - client: sends the token requests.
    ///   - tokenURL: the token endpoint.
    init(client: any BenchClient, tokenURL: URL) {
        self.client = client
        self.tokenURL = tokenURL
    }

    /// The token to send now, if there is one.
    func current() -> String? { token }

    /// A token other than `stale`: the one a refresh already brought, or the running refresh's,
    /// or a new refresh's.
    /// - Throws: when the token request fails.
    func token(replacing stale: String?) async throws -> String {
        if let token, token != stale { return token }
        if let refresh { return try await refresh.value }
        let task = Task { [client, tokenURL] in
            let request = BenchRequest(method: "POST", url: tokenURL,
                                       headers: [("Authorization", "Basic YmVuY2g6YmVuY2g=")], keepsBody: true)
            let response = try await client.send(request)
            guard response.status == 200, let body = response.body else {
                throw BenchError("the token endpoint answered \(response.status)")
            }
            return try JSONDecoder().decode(TokenReply.self, from: body).accessToken
        }
        refresh = task
        defer { refresh = nil }
        let fresh = try await task.value
        token = fresh
        return fresh
    }

    /// Sends `request` with the current token; on a 401, waits for a newer token and sends it
    /// again, at most three times.
    /// - Throws: the client's errors, or the token endpoint's.
    nonisolated func send(_ request: BenchRequest) async throws -> BenchResponse {
        var token = await current()
        for _ in 0..<3 {
            var authorized = request
            if let token { authorized.headers.append(("Authorization", "Bearer " + token)) }
            let response = try await client.send(authorized)
            guard response.status == 401 else { return response }
            token = try await self.token(replacing: token)
        }
        return BenchResponse(status: 401, bodyBytes: 0)
    }
}
