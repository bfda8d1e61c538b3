import ChatCaveCLI
import Foundation

// `chatcave <command> [options]`: see `chatcave --help`.
let status = await ChatCaveCommandLine.run(Array(CommandLine.arguments.dropFirst()))
exit(status)
