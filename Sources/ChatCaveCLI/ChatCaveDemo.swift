import ChatCave
import ChatCaveServer
import Courier
import Foundation

/// `chatcave demo`: a scripted conversation on an embedded server, showing the whole stack.
///
/// An embedded ``ChatCaveServer`` starts on a free loopback port. Alice and Bob sign up, Alice
/// creates a room, both join, and each polls it while they talk. Midway the server revokes
/// Bob's API key: his next requests get 401, Courier's re-authentication queue holds them,
/// Bob's authentication handler answers with his stored password, the service signs in again
/// and the held requests are resent. Bob leaves; a summary follows. Everything it starts
/// (server, transport, pollers) is stopped before it returns.
public enum ChatCaveDemo {
    /// The demo's settings.
    public struct Options: Sendable {
        /// How often each user polls; 200 ms by default (the service's default is 1.5 s) so the
        /// demo takes a few seconds.
        public var pollInterval: Duration
        /// The server's PBKDF2 iteration count; the production default (210,000) by default.
        public var passwordIterations: Int
        /// How long Bob "types his password" while his requests are held; 400 ms by default.
        public var signInDelay: Duration

        /// Creates options; every parameter has the default described on its property.
        public init(pollInterval: Duration = .milliseconds(200), passwordIterations: Int = 210_000,
                    signInDelay: Duration = .milliseconds(400)) {
            self.pollInterval = pollInterval
            self.passwordIterations = passwordIterations
            self.signInDelay = signInDelay
        }
    }

    /// What happened, for the caller to check.
    public struct Summary: Sendable {
        /// Alice's client figures.
        public var alice: ChatCaveStatistics
        /// Bob's client figures.
        public var bob: ChatCaveStatistics
        /// What Alice's poller delivered, in order.
        public var aliceSaw: [Message]
        /// What Bob's poller delivered, in order.
        public var bobSaw: [Message]
        /// How many 401 answers the server sent.
        public var unauthorizedAnswers: Int
    }

    /// Runs the demo.
    /// - Parameters:
    ///   - options: timings and hashing cost; ``Options/init(pollInterval:passwordIterations:signInDelay:)`` by default.
    ///   - output: where the conversation and summary go.
    /// - Returns: the summary.
    /// - Throws: a ``ChatCaveError`` or a timeout when a step fails.
    public static func run(options: Options = Options(), output: CommandOutput) async throws -> Summary {
        let server = try ChatCaveServer(port: 0, configuration: .init(passwordIterations: options.passwordIterations))
        let transport = NativeTransport()
        defer {
            transport.shutdown()
            server.shutdown()
        }
        output.line("ChatCave demo — embedded server on \(server.baseURL.absoluteString)")
        output.line()
        let script = DemoScript(server: server, transport: transport, options: options, output: output)
        defer { script.stop() }
        return try await script.perform()
    }
}

/// The `demo` command.
enum DemoCommand {
    static let usage = """
        USAGE: chatcave demo [--interval MILLISECONDS]

        Starts a ChatCave server on a free loopback port and runs a short conversation between
        alice and bob: sign-up, a room, messages seen through polling, a revoked API key that
        Courier's re-authentication queue recovers from, and a summary. Takes a few seconds.

        OPTIONS:
          --interval MS     how often each user polls; 200 by default
        """

    static func run(_ arguments: [String], output: CommandOutput) async throws -> Int32 {
        let parsed = try CommandArguments(arguments, valueOptions: ["interval"])
        if parsed.wantsHelp {
            output.line(usage)
            return ChatCaveCommandLine.success
        }
        try parsed.requirePositionals(0, 0, usage: "chatcave demo [--interval MILLISECONDS]")
        var options = ChatCaveDemo.Options()
        if let millis = try parsed.integer("interval", in: 20...5_000) { options.pollInterval = .milliseconds(millis) }
        _ = try await ChatCaveDemo.run(options: options, output: output)
        return ChatCaveCommandLine.success
    }
}
