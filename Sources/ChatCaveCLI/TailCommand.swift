import ChatCave
import Foundation

/// `chatcave tail <room>`: prints the room's messages, then new ones as they arrive, until
/// SIGINT or SIGTERM (or, in-process, until its task is cancelled). Messages are printed by
/// ``MessageFormatter``, with control and bidi characters escaped.
enum TailCommand {
    static func run(room: Chatroom, service: ChatCaveService, arguments: CommandArguments, output: CommandOutput) async throws {
        var interval = Duration.milliseconds(1_500)
        if let text = arguments[option: "interval"] {
            guard let seconds = Double(text), seconds >= 0.05, seconds <= 3_600 else {
                throw CommandArguments.UsageError(description: "--interval must be a number of seconds from 0.05 to 3600")
            }
            interval = .milliseconds(Int(seconds * 1_000))
        }
        output.line("Messages of \(TerminalText.escaped(room.name)) (Ctrl-C to stop):")
        let poller = service.makePoller(for: room.id, interval: interval)
        poller.start(onMessages: { messages in
            for message in messages { output.line(MessageFormatter.line(for: message)) }
        }, onError: { error in
            output.error("chatcave tail: \(ClientCommand.explain(error)); retrying")
        })
        _ = await Terminal.waitForInterrupt()
        poller.stop()
    }
}
