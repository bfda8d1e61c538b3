import CourierTestServer
import Foundation
import Glibc

// bench-server: CourierTestServer in a process of its own, for courier-bench.
// Prints "PORT <n>" once listening; stops on SIGTERM or SIGINT, or when its parent goes away.
// Usage: bench-server [--files <folder of static files>]

var limit = rlimit()
if getrlimit(Int32(RLIMIT_NOFILE.rawValue), &limit) == 0 {
    limit.rlim_cur = limit.rlim_max
    _ = setrlimit(Int32(RLIMIT_NOFILE.rawValue), &limit)
}

let arguments = CommandLine.arguments
let files = arguments.firstIndex(of: "--files").flatMap { index in
    index + 1 < arguments.count ? URL(fileURLWithPath: arguments[index + 1]) : nil
}

let parent = getppid()
StopSignal.install()

do {
    let server = try TestServer(configuration: .init(idleTimeout: .seconds(300), eventLoopCount: 2))
    BenchRoutes().install(on: server, files: files)
    FileHandle.standardOutput.write(Data("PORT \(server.port)\n".utf8))
    while !StopSignal.isRaised && getppid() == parent {
        usleep(100_000)
    }
    server.shutdown()
} catch {
    FileHandle.standardError.write(Data("bench-server: \(error)\n".utf8))
    exit(1)
}
