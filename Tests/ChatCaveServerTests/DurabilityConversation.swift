import CourierTestServer
import CourierTestSupport
import Foundation
import Testing
#if canImport(Glibc)
import Glibc
#endif

/// A seeded conversation of several clients with `chatcave serve` as a child process on a data
/// directory, killed (SIGKILL, sometimes with a burst of requests in flight) or stopped
/// (SIGTERM) at random points and started again on the same directory, against a
/// ``DurabilityModel``.
///
/// Between stops, steps are sequential (`+Steps`): every answer is checked against the model,
/// and the model follows what was acknowledged. A burst (`+Burst`) sends one change per client
/// at once and kills the server while they run. After each start ``verify()`` checks that the
/// server holds exactly what the model holds, settles the burst's changes, and checks the keys.
/// Every mismatch is recorded as an issue naming the seed; the first one ends the conversation
/// (``failed``). The caller stops the server with ``stop(_:)`` (a `defer`).
final class DurabilityConversation {
    /// The server's data directory.
    let directory: URL
    /// The random choices, replayable from the seed.
    var random: SeededRandom
    /// What the server must hold.
    var model = DurabilityModel()
    /// The running server, if any.
    private(set) var server: ServerProcess?
    /// Whether a check failed (the conversation then stops).
    private(set) var failed = false
    /// How many texts and names were made (each gets a unique tag).
    var serial = 0
    /// What happened, for the failure messages: stops, starts, bursts.
    private(set) var log: [String] = []

    /// A conversation over a new data directory `directory` (created by the server).
    init(directory: URL, random: SeededRandom) {
        self.directory = directory
        self.random = random
    }

    /// The port of the running server.
    var port: Int { server?.port ?? 0 }

    /// Starts the server on the data directory, durability `synced` or `flushed` at random.
    func start() throws {
        let durability = random.next() % 2 == 0 ? "synced" : "flushed"
        server = try ServerProcess.start(dataDirectory: directory, arguments: ["--durability", durability])
        model.restarted()
        note("started (\(durability)) on port \(port)")
    }

    /// Stops the server with `signal` (SIGKILL or SIGTERM) and waits until it is gone.
    func stop(_ signal: Int32) {
        guard let running = server else { return }
        running.kill(signal)
        server = nil
        note(signal == SIGKILL ? "killed" : "stopped with SIGTERM")
    }

    /// Adds a line to the log shown with failures.
    func note(_ line: String) {
        log.append(line)
        if log.count > 40 { log.removeFirst() }
    }

    /// Records a failed check (with the seed and the recent log) unless `condition` holds.
    /// - Returns: `condition`.
    @discardableResult
    func check(_ condition: Bool, _ message: @autoclosure () -> String, sourceLocation: SourceLocation = #_sourceLocation) -> Bool {
        if !condition {
            failed = true
            Issue.record(Comment(rawValue: "\(message()) — \(random.replayHint); recent: \(log.suffix(8).joined(separator: " | "))"),
                         sourceLocation: sourceLocation)
        }
        return condition
    }

    /// Sends a request to the running server.
    func send(_ request: DurabilityRequest) -> RawHTTPClient.Response? {
        request.send(port: port)
    }

    /// Sends a request that must be answered (the server runs, nothing kills it).
    /// - Returns: the response, or `nil` (a failed check) when none arrived.
    func exchange(_ request: DurabilityRequest, sourceLocation: SourceLocation = #_sourceLocation) -> RawHTTPClient.Response? {
        let response = send(request)
        check(response != nil, "\(request.method) \(request.path) got no answer", sourceLocation: sourceLocation)
        return response
    }

    /// A new unique tag for a name or a text.
    func nextTag(_ prefix: String) -> String {
        serial += 1
        return "\(prefix)\(serial)"
    }

    /// A random element of `items`, or `nil` when it is empty.
    func pick<T>(_ items: [T]) -> T? {
        items.isEmpty ? nil : items[Int(random.next() % UInt64(items.count))]
    }

    /// Whether a random draw out of `total` falls below `chance`.
    func chance(_ chance: UInt64, in total: UInt64) -> Bool {
        random.next() % total < chance
    }
}
