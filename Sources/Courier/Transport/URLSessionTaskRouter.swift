import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import Synchronization

/// Routes URLSession's delegate callbacks to the exchange of each task, and cancels tasks in the
/// order of those callbacks.
///
/// Corelibs stops the process when a task is cancelled between its redirect callback and the
/// moment the answer reaches the task's work queue ("Received callback for HTTP redirection, but
/// we're not waiting for it"), and a task whose redirect callback is never answered completes
/// only if it is cancelled. So every cancel runs on the session's serial delegate queue, where
/// the redirect callbacks run too, and unregisters the task's exchange there:
/// - a redirect callback that finds its exchange registered runs before the task's cancel, and
///   is answered at once: the answer reaches the work queue before the cancel does;
/// - a redirect callback that finds no exchange runs after the task's cancel, and gets no
///   answer: the cancel ends the task.
/// Nothing else cancels a task that may still get a redirect callback.
final class URLSessionTaskRouter: NSObject, URLSessionDataDelegate, Sendable {
    private let exchanges = Mutex<[Int: URLSessionExchange]>([:])
    private let delegateQueue: OperationQueue
    /// Where `URLSessionTask.cancel()` runs: it waits for the task's work queue inside corelibs,
    /// and the delegate queue's operations run on Dispatch's shared worker threads, which a few
    /// such waits across the process would hold, stalling every session's callbacks.
    private let cancels = DispatchQueue(label: "Courier.URLSessionTransport.cancels")

    /// Creates the router of a session whose delegate queue is `delegateQueue` (a serial queue).
    init(delegateQueue: OperationQueue) {
        self.delegateQueue = delegateQueue
    }

    /// Routes the callbacks of `task` to `exchange`.
    func register(_ exchange: URLSessionExchange, for task: URLSessionTask) {
        exchanges.withLock { $0[task.taskIdentifier] = exchange }
    }

    /// Forgets the exchange of `task` on the delegate queue, after every callback already queued,
    /// then cancels the task: corelibs reports no end of a task cancelled before it started, and a
    /// later callback of the task must know that it was cancelled. A redirect answer given before
    /// the exchange was forgotten is already on the task's work queue, ahead of the cancel.
    func cancel(_ task: URLSessionTask) {
        inOrder { [self] in
            _ = exchanges.withLock { $0.removeValue(forKey: task.taskIdentifier) }
            cancels.async { task.cancel() }
        }
    }

    /// Runs `work` on the delegate queue, after every callback already queued.
    func inOrder(_ work: @escaping @Sendable () -> Void) {
        delegateQueue.addOperation(work)
    }

    /// Invalidates `session`, cancelling its tasks; run it on the delegate queue (``inOrder(_:)``),
    /// like every cancel, so that a redirect callback queued before it is answered first. Every
    /// exchange is forgotten too: a later callback of a cancelled task gets no answer.
    func invalidate(_ session: URLSession) {
        exchanges.withLock { $0.removeAll() }
        session.invalidateAndCancel()
    }

    private func exchange(for task: URLSessionTask) -> URLSessionExchange? {
        exchanges.withLock { $0[task.taskIdentifier] }
    }

    func urlSession(_ session: URLSession, task: URLSessionTask, willPerformHTTPRedirection response: HTTPURLResponse,
                    newRequest request: URLRequest, completionHandler: @escaping @Sendable (URLRequest?) -> Void) {
        // The pipeline owns redirects: the answer is always nil, given exactly once, unless the
        // task's cancel ran first (its exchange is no longer registered), which ends the task.
        guard let exchange = exchange(for: task) else {
            URLSessionExchange.redirectRaces.add(1, ordering: .relaxed)
            return
        }
        exchange.willAnswerRedirect()
        completionHandler(nil)
    }

    func urlSession(_ session: URLSession, task: URLSessionTask, didReceive challenge: URLAuthenticationChallenge,
                    completionHandler: @escaping @Sendable (URLSession.AuthChallengeDisposition, URLCredential?) -> Void) {
        // The pipeline's re-authentication queue owns credentials. Corelibs URLSession cannot hand
        // a challenged 401 back as a response (default handling never completes without stored
        // credentials), so the exchange keeps the challenge's response head and ends the task.
        if let exchange = exchange(for: task), let response = challenge.failureResponse {
            exchange.didReceiveChallenge(response)
        }
        completionHandler(.cancelAuthenticationChallenge, nil)
    }

    func urlSession(_ session: URLSession, dataTask: URLSessionDataTask, didReceive response: URLResponse,
                    completionHandler: @escaping @Sendable (URLSession.ResponseDisposition) -> Void) {
        let keepGoing = exchange(for: dataTask)?.didReceive(response) ?? false
        completionHandler(keepGoing ? .allow : .cancel)
    }

    func urlSession(_ session: URLSession, dataTask: URLSessionDataTask, didReceive data: Data) {
        guard let exchange = exchange(for: dataTask) else { return }
        // Already on the delegate queue, and a task that delivers body data gets no redirect
        // callback: the exchange stays registered and ends with its failure when the task does.
        if !exchange.didReceive(data) { dataTask.cancel() }
    }

    func urlSession(_ session: URLSession, task: URLSessionTask, didCompleteWithError error: (any Error)?) {
        let exchange = exchanges.withLock { $0.removeValue(forKey: task.taskIdentifier) }
        exchange?.complete(error: error, response: task.response)
    }
}
