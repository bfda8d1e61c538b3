import Courier
import Foundation
import Testing

extension OnceConversationRun {
    /// Checks every request of the conversation: how many terminal callbacks it had (one, or none
    /// when its unmanaged connection went while it was held: `silence` true, none or one when it
    /// may have ended meanwhile: false), that they agree and the model allows them, that none ran
    /// off the callback queue, and that nothing came after them.
    func check(_ ledger: OnceLedger, _ handles: [Handle], _ cancels: [[Knowledge]], _ silence: [Bool?],
               _ tally: inout TerminalCallbackConversationTests.Tally) {
        let ids = delegateIDs(ledger, handles)
        for request in plan.requests {
            let index = request.index
            let delegate = ids[index].map(ledger.delegateEndings) ?? []
            let user = request.style == .delegate ? delegate : ledger.userEndings(index)
            let allowed = plan.allowed(request, cancels: cancels[index])
            let history = "\(request): cancels \(cancels[index]), allowed \(allowed), the delegate heard \(delegate), the user \(user); \(context)"
            switch silence[index] {
            case true?:
                #expect(delegate.isEmpty && user.isEmpty, "a request held when its unmanaged connection went had a callback: \(history)")
                tally.silent += 1
                continue
            case false?:
                if delegate.isEmpty && user.isEmpty { continue }
            case nil:
                break
            }
            #expect(delegate.count == 1, "\(delegate.count) terminal delegate callbacks: \(history)")
            #expect(user.count == 1, "\(user.count) terminal callbacks to the user's code: \(history)")
            guard let ending = user.first else { continue }
            #expect(allowed.contains(ending), "an ending the model does not allow: \(history)")
            #expect(delegate.first == nil || delegate.first == ending, "the delegate and the user heard different ends: \(history)")
            tallyEnding(request, ending, cancels[index], &tally)
        }
        #expect(ledger.lateCallbacks.isEmpty, "callbacks after the terminal one: \(ledger.lateCallbacks); \(context)")
        #expect(ledger.offQueueCallbacks.isEmpty, "callbacks off the callback queue: \(ledger.offQueueCallbacks); \(context)")
    }

    /// Each request's id as the delegate knows it: the one `start` returned, or for an `async`
    /// request the one `willSend` tied to its index; an `async` request cancelled before
    /// `willSend` takes one of the ids the delegate heard end and nobody else claims (any one:
    /// each of them must have ended cancelled).
    private func delegateIDs(_ ledger: OnceLedger, _ handles: [Handle]) -> [RequestID?] {
        let ended = ledger.delegateEndedIDs
        var ids = handles.map(\.id)
        for (id, index) in ended { if let index, ids[index] == nil { ids[index] = id } }
        var unclaimed = ended.keys.filter { !ids.contains($0) }.sorted()
        for index in ids.indices where ids[index] == nil && !unclaimed.isEmpty {
            ids[index] = unclaimed.removeFirst()
            #expect(ledger.delegateEndings(ids[index]!) == [.failed(HTTPConnectionError.cancelled.kindName)],
                    "an async request the delegate never saw start ended otherwise than cancelled; \(context)")
        }
        #expect(unclaimed.isEmpty, "the delegate heard requests end that the conversation did not start: \(unclaimed); \(context)")
        return ids
    }

    /// Counts the situations a request met: a race either way, a cancel before any answer, an expiry.
    private func tallyEnding(_ request: OnceConversation.Request, _ ending: OnceLedger.Ending, _ cancels: [Knowledge],
                             _ tally: inout TerminalCallbackConversationTests.Tally) {
        let cancelled = ending == .failed(HTTPConnectionError.cancelled.kindName)
        if case .cancelRacingAnswer = request.action, cancels.last == .racing {
            if cancelled { tally.raceCancelled += 1 } else { tally.raceAnswered += 1 }
        }
        if cancelled, cancels.contains(.beforeAnswer) { tally.cancelledBeforeAnswer += 1 }
        if case .expire = request.action, !cancelled { tally.expired += 1 }
    }
}
