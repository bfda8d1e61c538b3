import Foundation

/// The command line of `courier-bench`.
struct BenchOptions: Sendable {
    /// Scenario numbers or names to run (prefixes match: `concurrent` runs both); all when empty.
    var filters: [String] = []
    /// Interleaved rounds per scenario; 3 by default (1 with `--quick`).
    var rounds = 3
    /// Seconds per client per round in the timed scenarios; 3 by default (0.5 with `--quick`).
    var duration = 3.0
    /// Requests of the soak for Courier's native transport; 1,000,000 by default (20,000 with
    /// `--quick`). Slower clients run a tenth of it.
    var soakRequests = 1_000_000
    /// How many times each selected scenario runs; 1 by default. With more, a last table gives
    /// the median of each client's ratio to AsyncHTTPClient and to wrk over the repeats.
    var repeats = 1
    /// Requests in flight in the slow-server scenario; 10,000 by default (1,000 with `--quick`).
    var slowRequests = 10_000
    /// Seconds before a slow-server run is cut short; 30 by default.
    var slowTimeLimit = 30.0
    /// The size of the file downloaded and uploaded in 12a and 12b; 4 GiB by default (256 MiB
    /// with `--quick`).
    var largeBytes: Int64 = 4 << 30
    /// Streamed downloads at once in 12c; 100 by default.
    var streamCount = 100
    /// The size of each streamed download in 12c; 100 MiB by default (8 MiB with `--quick`).
    var streamBytes: Int64 = 100 << 20
    /// Only these clients, when set.
    var clients: Set<ClientKind>?
    /// Also write the report as Markdown to this file.
    var markdownPath: String?
    /// The arguments as given, for the report.
    var commandLine: [String] = []

    /// The usage text.
    static let usage = """
    usage: courier-bench [SCENARIO...] [--rounds N] [--duration SECONDS] [--soak-requests N]
                         [--slow-requests N] [--slow-limit SECONDS] [--clients a,b,...] [--quick]
                         [--repeat N] [--markdown FILE] [--large-mib N] [--streams N] [--stream-mib N]

    SCENARIO is a number (1-13) or a name prefix; every scenario runs when none is given:
      1 sequential        2 concurrent-16, concurrent-256      3 post-1k, get-1m
      4 pipeline          5 auth-storm      6 cache      7 soak      8 slow-server
      9 tls-sequential, tls-concurrent-16, tls-new-connection, tls-full-handshake (HTTPS)
     10 h2-sequential, h2-concurrent-16, h2-concurrent-256 (HTTP/2 over TLS)
     11 h2-soak (1,000,000 HTTP/2 requests, 16 in flight)
     12 download-to-file, upload-from-file (4 GiB), streams (100 × 100 MiB at once); nginx only
     13 coalescing (1,000 identical GETs at once; Courier with coalescesRequests)
    Clients: \(ClientKind.allCases.map(\.rawValue).joined(separator: ", "))
    --quick is a smoke run: 1 round of 0.5 s, a 20,000-request soak, 1,000 slow requests.
    --repeat N runs each scenario N times and reports the median of the ratios.
    --large-mib, --streams and --stream-mib size scenario 12 (4096, 100 and 100 by default); its
    files are made at run time in /dev/shm (or the build folder) and deleted at the end.
    """

    /// Parses `arguments` (without the program name).
    /// - Throws: ``BenchError`` with the usage for an unknown option or a bad value.
    init(arguments: [String]) throws {
        commandLine = arguments
        var rest = arguments[...]
        if arguments.contains("--quick") {
            rounds = 1
            duration = 0.5
            soakRequests = 20_000
            slowRequests = 1_000
            largeBytes = 256 << 20
            streamBytes = 8 << 20
        }
        func value(_ option: String) throws -> String {
            guard let value = rest.popFirst() else { throw BenchError("\(option) needs a value\n\n\(Self.usage)") }
            return value
        }
        func number<Value: LosslessStringConvertible>(_ option: String) throws -> Value {
            let text = try value(option)
            guard let number = Value(text.replacingOccurrences(of: "_", with: "")) else {
                throw BenchError("\(option): '\(text)' is not a number\n\n\(Self.usage)")
            }
            return number
        }
        while let argument = rest.popFirst() {
            switch argument {
            case "--rounds": rounds = max(1, try number(argument))
            case "--repeat": repeats = max(1, try number(argument))
            case "--duration": duration = max(0.2, try number(argument))
            case "--soak-requests": soakRequests = max(1, try number(argument))
            case "--slow-requests": slowRequests = max(1, try number(argument))
            case "--slow-limit": slowTimeLimit = max(1, try number(argument))
            case "--markdown": markdownPath = try value(argument)
            case "--large-mib": largeBytes = Int64(max(1, try number(argument) as Int)) << 20
            case "--streams": streamCount = max(1, try number(argument))
            case "--stream-mib": streamBytes = Int64(max(1, try number(argument) as Int)) << 20
            case "--quick": break
            case "--clients":
                let names = try value(argument).split(separator: ",").map(String.init)
                let kinds = names.compactMap(ClientKind.init(rawValue:))
                guard kinds.count == names.count else { throw BenchError("unknown client in \(names)\n\n\(Self.usage)") }
                clients = Set(kinds)
            case "-h", "--help": throw BenchError(Self.usage)
            default:
                guard !argument.hasPrefix("-") else { throw BenchError("unknown option \(argument)\n\n\(Self.usage)") }
                filters.append(argument)
            }
        }
    }
}
