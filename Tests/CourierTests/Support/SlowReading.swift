@testable import Courier
import Foundation

extension HTTPBodyStream {
    /// Reads the body to its end, pausing `pause` after each of the first `slowChunks` chunks, so
    /// that the reader falls behind the network and the transport has to hold the body back.
    /// - Returns: every byte of the body, in order.
    func readSlowly(slowChunks: Int, pause: Duration = .milliseconds(20)) async throws -> Data {
        var received = Data()
        var slowed = 0
        for try await chunk in self {
            received.append(chunk)
            if slowed < slowChunks {
                slowed += 1
                try await Task.sleep(for: pause)
            }
        }
        return received
    }
}
