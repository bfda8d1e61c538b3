import Foundation

/// The `chatcave` program: `demo`, `serve`, `bench-store`, and the client commands, with hand-written
/// argument parsing.
///
/// Every command answers `--help`. Exit codes: 0 for success, 1 when the command failed
/// (the server refused, the network failed), 2 for a usage mistake.
public enum ChatCaveCommandLine {
    /// The exit code of a successful command.
    public static let success: Int32 = 0
    /// The exit code of a command that failed.
    public static let failure: Int32 = 1
    /// The exit code of a usage mistake.
    public static let usageError: Int32 = 2

    /// Runs one command line.
    /// - Parameters:
    ///   - arguments: the arguments after the program's name, e.g. `["say", "Lobby", "hi"]`.
    ///   - environment: the environment (`CHATCAVE_SERVER`, `CHATCAVE_NAME`, `CHATCAVE_PASSWORD`,
    ///     `CHATCAVE_HOME`, `PORT`, `HOME`); the process's by default.
    ///   - standardInput: reads one line of standard input without its newline (`nil` at its
    ///     end), for `--password-stdin`; `readLine()` by default.
    ///   - output: where to write; standard output and error by default.
    /// - Returns: the exit code.
    public static func run(_ arguments: [String], environment: [String: String] = ProcessInfo.processInfo.environment,
                           standardInput: () -> String? = { readLine(strippingNewline: true) },
                           output: CommandOutput = .standard) async -> Int32 {
        guard let name = arguments.first else {
            output.error(usage)
            return usageError
        }
        let rest = Array(arguments.dropFirst())
        do {
            switch name {
            case "-h", "--help", "help":
                output.line(usage)
                return success
            case "demo":
                return try await DemoCommand.run(rest, output: output)
            case "serve":
                return try await ServeCommand.run(rest, environment: environment, output: output)
            case "bench-store":
                return try await BenchStoreCommand.run(rest, output: output)
            default:
                guard let command = ClientCommand(rawValue: name) else {
                    throw CommandArguments.UsageError(description: "unknown command '\(name)'")
                }
                return try await command.run(rest, environment: environment, standardInput: standardInput, output: output)
            }
        } catch let error as CommandArguments.UsageError {
            output.error("chatcave: \(error)")
            let known = ClientCommand(rawValue: name) != nil || ["demo", "serve", "bench-store"].contains(name)
            output.error("Run 'chatcave \(known ? name + " " : "")--help' for usage.")
            return usageError
        } catch {
            output.error("chatcave \(name): \(error)")
            return failure
        }
    }

    /// The program's usage text.
    public static let usage = """
        chatcave — the ChatCave chat service: a demo, the reference server, and a client

        USAGE: chatcave <command> [options]

        COMMANDS:
          demo                    a scripted conversation on an embedded server (a few seconds)
          serve                   run the reference server
          bench-store             measure the server on its SQLite store through the HTTP API
          signup                  create an account and sign in
          signin                  sign in
          signout                 sign out and forget the saved session
          rooms                   list the chatrooms
          create <name>           create a chatroom
          join <room>             join a chatroom (its id or its name)
          leave <room>            leave a chatroom
          say <room> <text...>    post a message
          tail <room>             print new messages until interrupted (Ctrl-C)
          delete <room>           delete an empty chatroom

        CLIENT OPTIONS:
          --server URL            the server (or CHATCAVE_SERVER); http://127.0.0.1:3000 by default
          --name NAME             the user name (or CHATCAVE_NAME)
          --password-stdin        read the password from the first line of standard input
          --password-file PATH    read the password from the first line of PATH (mode 0600: only you may read it)
          --password PASSWORD     the password; other local users can see it (ps), so prefer the two above
                                  or CHATCAVE_PASSWORD; without any, it is prompted for when needed

        The server speaks plain HTTP: keep it on 127.0.0.1, or put a TLS proxy in front (a warning says when not).
        Text from the server is printed with control and bidi characters escaped, e.g. ESC as \\u{1B}.

        The signed-in user is remembered in $CHATCAVE_HOME/session.json (~/.chatcave by default), mode 0600,
        in a directory of mode 0700; a directory that another user owns or may write to is refused.
        Run 'chatcave <command> --help' for the options of one command.
        """
}
