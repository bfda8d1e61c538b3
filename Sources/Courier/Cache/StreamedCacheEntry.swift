import Foundation
import Synchronization

/// Gathers a streamed response's body for the cache as it passes to its reader (through a
/// ``BodyStreamBuffer/Tap``), up to a limit: the entry is stored when the body ends cleanly
/// within the limit; past the limit the gathered bytes are dropped at once and nothing is stored;
/// a body that breaks off or is abandoned stores nothing either.
final class StreamedCacheEntry: Sendable {
    private struct State {
        /// The bytes so far; `nil` once over the limit or ended.
        var body: Data? = Data()
    }

    private let limit: Int
    private let state = Mutex(State())
    private let store: @Sendable (Data) -> Void

    /// - Parameters:
    ///   - limit: the largest body stored, in bytes.
    ///   - store: stores the entry with its whole body; called at most once.
    init(limit: Int, store: @escaping @Sendable (Data) -> Void) {
        self.limit = limit
        self.store = store
    }

    /// The tap to set on the body's buffer.
    var tap: BodyStreamBuffer.Tap {
        BodyStreamBuffer.Tap(chunk: { [self] chunk in add(chunk) }, end: { [self] clean in end(clean) })
    }

    private func add(_ chunk: Data) {
        state.withLock { state in
            guard state.body != nil else { return }
            if state.body!.count + chunk.count > limit {
                state.body = nil  // over the limit: the partial entry goes
            } else {
                state.body!.append(chunk)
            }
        }
    }

    private func end(_ clean: Bool) {
        let body = state.withLock { state -> Data? in
            defer { state.body = nil }
            return state.body
        }
        if clean, let body { store(body) }
    }
}
