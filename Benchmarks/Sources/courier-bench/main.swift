import Foundation

// courier-bench: Courier against URLSession, AsyncHTTPClient and wrk, side by side in one run.
// See Benchmarks/README.md. With `--worker <job JSON>` it is a worker process measuring one client.

let arguments = Array(CommandLine.arguments.dropFirst())
if arguments.first == WorkerJob.argument, arguments.count == 2 {
    exit(await Worker.main(jobJSON: arguments[1]))
}
do {
    let options = try BenchOptions(arguments: arguments)
    exit(await Driver(options: options).run())
} catch {
    FileHandle.standardError.write(Data("\(error)\n".utf8))
    exit(2)
}
