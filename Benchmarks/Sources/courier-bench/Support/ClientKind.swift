/// The HTTP clients the benchmark measures, one per table row.
enum ClientKind: String, Codable, CaseIterable, Sendable {
    /// `HTTPConnection` over Courier's own transport (`NativeTransport`).
    case courierNative = "courier-native"
    /// `HTTPConnection` over `NativeTransport`, with the caller's requests sent from a task that
    /// prefers the connection's executor (`HTTPConnection.executor`, the transport's event loop).
    case courierNativeOnLoop = "courier-loop"
    /// `HTTPConnection` over a `NativeTransport` with two event loops (`loopCount: 2`), so that
    /// one origin's connections spread over both.
    case courierNativeTwoLoops = "courier-2-loops"
    /// `HTTPConnection` over `NativeTransport` with the full pipeline (scenario 4) and a delegate
    /// that implements `willSend` and `didFinishWith`: two trips to the callback queue per request.
    case courierNativeHeard = "courier-delegate"
    /// `HTTPConnection` over `URLSessionTransport`.
    case courierURLSession = "courier-urlsession"
    /// Foundation's `URLSession`, used directly.
    case urlSession = "urlsession"
    /// swift-server's AsyncHTTPClient.
    case asyncHTTPClient = "ahc"
    /// A plain blocking Glibc socket with keep-alive: the CPU floor for a Swift client.
    case blockingSocket = "blocking-socket"
    /// `NativeTransport.send(_:observer:)` with no pipeline above it.
    case nativeBare = "native-bare"
    /// `URLSessionTransport.send(_:observer:)` with no pipeline above it.
    case urlSessionBare = "urlsession-bare"
    /// `HTTPConnection` over a transport that answers at once in memory (``InstantTransport``),
    /// plain (no delegate, retry policy or authenticator): the pipeline's own CPU, with no socket.
    case pipelineAlone = "pipeline-alone"
    /// As ``pipelineAlone``, with the full pipeline of scenario 4.
    case pipelineAloneFull = "pipeline-alone-full"
    /// wrk, the load generator written in C: the ceiling over HTTP/1.1.
    case wrk
    /// h2load (nghttp2), the HTTP/2 load generator written in C: the ceiling over HTTP/2.
    case h2load

    /// The name printed in the tables.
    var title: String {
        switch self {
        case .courierNative: "Courier (native)"
        case .courierNativeOnLoop: "Courier (native, caller on its loop)"
        case .courierNativeTwoLoops: "Courier (native, 2 loops)"
        case .courierNativeHeard: "Courier (native), delegate that listens"
        case .courierURLSession: "Courier (URLSessionTransport)"
        case .urlSession: "URLSession"
        case .asyncHTTPClient: "AsyncHTTPClient"
        case .blockingSocket: "blocking socket"
        case .nativeBare: "NativeTransport bare"
        case .urlSessionBare: "URLSessionTransport bare"
        case .pipelineAlone: "Courier pipeline alone, no socket"
        case .pipelineAloneFull: "Courier full pipeline alone, no socket"
        case .wrk: "wrk"
        case .h2load: "h2load"
        }
    }
}

extension ClientKind {
    /// Whether the client is a load generator in C that runs as a child process (wrk, h2load)
    /// rather than a Swift client in a worker process.
    var isLoadGenerator: Bool { self == .wrk || self == .h2load }

    /// Whether the client runs the pipeline alone, over ``InstantTransport``.
    var isPipelineAlone: Bool { self == .pipelineAlone || self == .pipelineAloneFull }
}
