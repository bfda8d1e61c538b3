import Foundation
import Synchronization

extension HTTPConnection {
    private struct GlobalDefaults: Sendable {
        var timeout: Duration = .seconds(60)
        var cachePolicy: CachePolicy = .useProtocolCachePolicy
        var retryPolicy: RetryPolicy = .never
        var transport: (any Transport)?
        var unhandledFailureLog: @Sendable (String) -> Void = HTTPConnection.writeToStandardError
    }

    private static let globals = Mutex(GlobalDefaults())

    /// The process-wide per-attempt timeout, used when neither the request nor its connection
    /// sets one. 60 seconds by default.
    public static var defaultTimeout: Duration {
        get { globals.withLock { $0.timeout } }
        set { globals.withLock { $0.timeout = newValue } }
    }

    /// The process-wide cache policy, used when neither the request nor its connection sets one.
    /// ``CachePolicy/useProtocolCachePolicy`` by default.
    public static var defaultCachePolicy: CachePolicy {
        get { globals.withLock { $0.cachePolicy } }
        set { globals.withLock { $0.cachePolicy = newValue } }
    }

    /// The process-wide retry policy, used when neither the request nor its connection sets one.
    /// ``RetryPolicy/never`` by default.
    public static var defaultRetryPolicy: RetryPolicy {
        get { globals.withLock { $0.retryPolicy } }
        set { globals.withLock { $0.retryPolicy = newValue } }
    }

    /// The transport of connections created without one: Courier's own HTTP/1.1 client,
    /// ``NativeTransport/shared``, by default (``URLSessionTransport`` can be chosen instead).
    /// Changing it affects connections created afterwards.
    public static var defaultTransport: any Transport {
        get { globals.withLock { $0.transport } ?? NativeTransport.shared }
        set { globals.withLock { $0.transport = newValue } }
    }

    /// Where a connection without an ``EventMonitor`` reports a failure nobody hears (a request
    /// started with closures but no error closure, on a connection with no delegate): one line,
    /// credentials redacted (``EventMonitor/Event/unhandledFailure(_:error:)``'s description).
    /// By default it is written to standard error, prefixed with `Courier: `; set it to send the
    /// line to your own log, or to `{ _ in }` to drop it knowingly.
    public static var unhandledFailureLog: @Sendable (String) -> Void {
        get { globals.withLock { $0.unhandledFailureLog } }
        set { globals.withLock { $0.unhandledFailureLog = newValue } }
    }

    private static let writeToStandardError: @Sendable (String) -> Void = { line in
        FileHandle.standardError.write(Data("Courier: \(line)\n".utf8))
    }
}
