import Courier
import Foundation

/// Reads a streamed body in steps a test chooses, keeping what it took.
struct BodyReader {
    private var iterator: HTTPBodyStream.Iterator
    /// The octets taken so far.
    private(set) var received = Data()

    init(_ body: HTTPBodyStream) {
        iterator = body.makeAsyncIterator()
    }

    /// Takes chunks until `count` octets in all were taken, or the body ended.
    mutating func take(upTo count: Int) async throws(HTTPConnectionError) {
        while received.count < count, let chunk = try await iterator.next() {
            received.append(chunk)
        }
    }

    /// Whether the body ends here (takes the next chunk, if any).
    mutating func atEnd() async throws(HTTPConnectionError) -> Bool {
        guard let chunk = try await iterator.next() else { return true }
        received.append(chunk)
        return false
    }
}
