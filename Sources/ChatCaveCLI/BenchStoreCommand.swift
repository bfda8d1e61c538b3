import ChatCaveServer
import Courier
import Foundation

/// `chatcave bench-store [--messages N] [--clients C] [--data-dir DIR] [--durability synced|flushed]`:
/// measures the reference server on its SQLite store through the real HTTP API.
///
/// It starts a server in this process on a free loopback port with a data directory (a new
/// temporary one, removed at the end, unless `--data-dir` is given), signs up one user per
/// client, creates a room they all join, and has the clients post N messages concurrently, each
/// with its own Courier `HTTPConnection` (keep-alive). It prints the posts per second of each
/// tenth of the run as it ends, the overall rate, and at the end the latency of
/// `GET /rooms/:id/messages?since=<id>` polls that return the last 10 messages.
enum BenchStoreCommand {
    static let usage = """
        USAGE: chatcave bench-store [--messages N] [--clients C] [--data-dir DIR] [--durability synced|flushed] [--polls P]

        Posts N messages from C concurrent clients through the HTTP API to a server on an SQLite store,
        and reports posts/s per 10% slice, then the latency of since-polls for the last 10 messages.

        OPTIONS:
          --messages N      how many messages to post; 100,000 by default (at least 10)
          --clients C       how many clients post at once, each on its own keep-alive connection; 8 by default
          --data-dir DIR    the server's data directory (kept afterwards; it may hold data already);
                            a new temporary directory, removed at the end, by default
          --durability D    'synced' (the default: every post is synced to the disk) or 'flushed'
                            (every post is in the database's log, synced at checkpoints); see chatcave serve --help
          --polls P         how many since-polls to time at the end; 200 by default
        """

    /// A failure of the run: the server refused or the network failed.
    struct Failure: Error, CustomStringConvertible {
        /// What went wrong.
        let description: String
    }

    static func run(_ arguments: [String], output: CommandOutput) async throws -> Int32 {
        let parsed = try CommandArguments(arguments, valueOptions: ["messages", "clients", "data-dir", "durability", "polls"])
        if parsed.wantsHelp {
            output.line(usage)
            return ChatCaveCommandLine.success
        }
        try parsed.requirePositionals(0, 0, usage: "chatcave bench-store [--messages N] [--clients C]")
        let total = try parsed.integer("messages", in: 10...100_000_000) ?? 100_000
        let clients = try parsed.integer("clients", in: 1...256) ?? 8
        let polls = try parsed.integer("polls", in: 1...100_000) ?? 200
        let durability = try ServeCommand.durabilityOption(parsed)
        let given = parsed[option: "data-dir"].map { URL(fileURLWithPath: $0, isDirectory: true) }
        let directory = given ?? FileManager.default.temporaryDirectory
            .appendingPathComponent("chatcave-bench-\(UUID().uuidString)", isDirectory: true)
        defer { if given == nil { try? FileManager.default.removeItem(at: directory) } }

        let server: ChatCaveServer
        do {
            server = try ChatCaveServer(configuration: .init(
                dataDirectory: directory, passwordIterations: 1_000,
                passwordLimits: .init(signUpsPerMinute: clients + 10), durability: durability))
        } catch {
            output.error("chatcave bench-store: \(error)")
            return ChatCaveCommandLine.failure
        }
        defer { server.shutdown() }
        let transport = NativeTransport(configuration: .init(maxConnectionsPerHost: clients + 1))
        defer { transport.shutdown() }

        output.line("bench-store: \(total) messages from \(clients) clients to \(server.baseURL.absoluteString), "
                    + "SQLite in \(directory.path), durability \(durability.rawValue)")
        output.line("load average at start: \(loadAverage())")
        let room = try await BenchStoreRoom.prepare(clients: clients, baseURL: server.baseURL, transport: transport)

        let progress = BenchStoreProgress(total: total) { slice in
            output.line("  slice \(slice.number) (\((slice.number - 1) * 10)-\(slice.number * 10)%): \(slice.posts) posts in "
                        + format(BenchStoreProgress.seconds(slice.duration), 2) + " s = " + format(slice.postsPerSecond, 0) + " posts/s")
        }
        let started = ContinuousClock.now
        try await withThrowingTaskGroup(of: Void.self) { group in
            for client in room.clients {
                group.addTask {
                    while let number = progress.next() {
                        _ = try await client.post(room: room.id, text: "message \(number)")
                        progress.finished()
                    }
                }
            }
            try await group.waitForAll()
        }
        let elapsed = BenchStoreProgress.seconds(ContinuousClock.now - started)
        let slices = progress.slices
        output.line("overall: \(total) posts in \(format(elapsed, 1)) s = \(format(Double(total) / elapsed, 0)) posts/s")
        if let first = slices.first, let last = slices.last {
            output.line("last slice / first slice: \(format(last.postsPerSecond / first.postsPerSecond, 2))")
        }

        let latencies = try await BenchStoreRoom.timeSincePolls(polls, room: room)
        output.line("since-polls returning the last 10 messages (\(polls), sequential): median \(format(latencies.median, 3)) ms, "
                    + "p90 \(format(latencies.p90, 3)) ms, p99 \(format(latencies.p99, 3)) ms, max \(format(latencies.max, 3)) ms")
        let sizes = ["chatcave.sqlite", "chatcave.sqlite-wal"].map { name in
            let path = directory.appendingPathComponent(name).path
            let bytes = (try? FileManager.default.attributesOfItem(atPath: path)[.size] as? NSNumber)?.int64Value ?? 0
            return "\(name) \(format(Double(bytes) / 1_048_576, 1)) MiB"
        }
        output.line("files: \(sizes.joined(separator: ", "))")
        output.line("load average at end: \(loadAverage())")
        return ChatCaveCommandLine.success
    }

    /// `/proc/loadavg`'s first three fields (1, 5 and 15 minutes), or `unknown`.
    static func loadAverage() -> String {
        guard let text = try? String(contentsOfFile: "/proc/loadavg", encoding: .utf8) else { return "unknown" }
        return text.split(separator: " ").prefix(3).joined(separator: " ")
    }

    /// `value` with `digits` decimals.
    static func format(_ value: Double, _ digits: Int) -> String {
        String(format: "%.\(digits)f", value)
    }
}
