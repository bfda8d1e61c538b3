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
    /// How many changes of bursts got no answer (their fate is settled after the restart).
    var lostAnswers = 0
    /// What happened, for the failure messages: stops, starts, bursts.
    private(set) var log: [String] = []

    /// A conversation over a new data directory `directory` (created by the server).
    init(directory: URL, random: SeededRandom) {
        self.directory = directory
        self.random = random
    }

    /// The port of the running server.
    var port: Int { server?.port ?? 0 }

    /// Starts the server on the data directory, durability `synced` or `flushed` at random;
    /// now and then after a start that was killed half-way (``killWhileStarting()``).
    func start() throws {
        if chance(1, in: 4) { try killWhileStarting() }
        let durability = random.next() % 2 == 0 ? "synced" : "flushed"
        server = try ServerProcess.start(dataDirectory: directory, arguments: ["--durability", durability])
        model.restarted()
        note("started (\(durability)) on port \(port)")
    }

    /// Starts the server and kills it (SIGKILL) while it opens its database: once the database
    /// file exists (at most 5 s), after a random 0 to 20 ms. A start that was cut short must
    /// leave the data as it was.
    func killWhileStarting() throws {
        let child = try ServerProcess.launch(dataDirectory: directory)
        let database = directory.appendingPathComponent("chatcave.sqlite").path
        let deadline = ContinuousClock.now + .seconds(5)
        while !FileManager.default.fileExists(atPath: database) && ContinuousClock.now < deadline && child.isRunning { usleep(200) }
        usleep(useconds_t(random.next() % 20_000))
        child.kill()
        note("killed while starting")
    }

    /// Stops the server with `signal` (SIGKILL or SIGTERM), waits until it is gone, and checks
    /// that it wrote nothing to its standard error (no failed change, no crash, no data race
    /// report of a sanitized build).
    func stop(_ signal: Int32) {
        guard let running = server else { return }
        running.kill(signal)
        server = nil
        note(signal == SIGKILL ? "killed" : "stopped with SIGTERM")
        let errors = (try? String(contentsOfFile: directory.path + "-stderr.txt", encoding: .utf8)) ?? ""
        check(errors.isEmpty, "the server wrote to its standard error: \(errors.prefix(2_000))")
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
