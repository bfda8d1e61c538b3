/// Retries failed attempts as the request's ``RetryPolicy`` decides.
///
/// Cancellation, a passed deadline and certificate failures are never retried, whatever the
/// policy. When attempts run out, the last failure is what the request reports. A `Retry-After`
/// longer than ``RetryPolicy/retryAfterCap`` ends the retries: the request reports that response
/// (its `Retry-After` tells the caller when to come back) instead of asking again early. The request's
/// deadline caps every wait: when it passes during a backoff, the request ends at once with
/// ``HTTPConnectionError/deadlineExceeded``: the request's end cancels its task, or, for a request
/// run in its caller's task, interrupts the backoff (``RequestInterruption``).
struct RetryStage: PipelineStage {
    let clock: any RequestClock

    /// Not under a policy that never retries.
    func applies(to context: RequestContext) -> Bool { !context.plan.retryPolicy.neverRetries }

    func send(_ request: TransportRequest, context: RequestContext, next: PipelineNext) async throws(HTTPConnectionError) -> HTTPResponse {
        var number = 1
        while true {
            let result: Result<HTTPResponse, HTTPConnectionError>
            do { result = .success(try await next(request)) } catch { result = .failure(error) }
            guard let delay = try backoff(after: result, of: request, number: number, context: context) else {
                return try result.get()
            }
            do {
                try await sleep(for: delay, interruption: context.interruption)
            } catch {
                throw .cancelled
            }
            number += 1
        }
    }

    /// What follows attempt `number`: `nil` to end the request with its result, else the wait
    /// before the next attempt (reported to the request's events); throws what ends the request
    /// at once. Out of line and not `async`, so that what it works with stays off the frame every
    /// request holds while it waits on the network.
    @inline(never)
    private func backoff(after result: Result<HTTPResponse, HTTPConnectionError>, of request: TransportRequest, number: Int,
                         context: RequestContext) throws(HTTPConnectionError) -> Duration? {
        let policy = context.plan.retryPolicy
        let attempt: RetryAttempt
        switch result {
        case .success(let response) where response.status.code < 400:
            return nil
        case .success(let response):
            attempt = RetryAttempt(number: number, method: request.method, url: request.url, error: nil, response: response)
        case .failure(let error) where error == .cancelled || error == .deadlineExceeded || error.isCertificateFailure:
            throw error
        case .failure(let error):
            attempt = RetryAttempt(number: number, method: request.method, url: request.url, error: error, response: nil)
        }

        guard case .retry(var delay) = policy.decision(for: attempt) else { return nil }
        if let response = attempt.response,
           let asked = RetryAfter.delay(response.headers["Retry-After"], now: clock.now()) {
            guard asked <= policy.retryAfterCap else { return nil }
            delay = asked
        }
        let reason = attempt.error ?? attempt.response.map { HTTPConnectionError.unacceptableStatus($0) } ?? .transportFailed
        if let upload = request.upload, upload.wasConsumed {
            throw .bodyNotReplayable.with(
                detail: "attempt \(number) ended (\(reason.kindName)) and its retry needs the request body again, which was a stream",
                underlying: attempt.error, response: attempt.response)
        }
        context.events.willRetry(attempt: number + 1, after: delay, reason: reason)
        return delay
    }

    /// Waits out a backoff on the clock; cancelling the task ends the wait. A request that runs in
    /// its caller's task sleeps on a task of its own, which the request's interruption cancels
    /// (the clock's sleep answers task cancellation only; the caller's own cancellation reaches
    /// the interruption).
    private func sleep(for delay: Duration, interruption: RequestInterruption?) async throws {
        guard let interruption else { return try await clock.sleep(for: delay) }
        let clock = self.clock
        let sleeper = Task { try await clock.sleep(for: delay) }
        try await interruption.whileWaiting({ () async throws in try await sleeper.value }, stop: { sleeper.cancel() })
    }
}
