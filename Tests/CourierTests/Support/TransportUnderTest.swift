import Courier
import CourierTestServer
import Foundation
import Synchronization

/// The transports every integration test runs against.
enum TransportUnderTest: String, CaseIterable, CustomStringConvertible, Sendable {
    case urlSession
    case native

    var description: String { rawValue }

    /// A fresh transport instance, so tests do not share pools.
    func make() -> any Transport {
        switch self {
        case .urlSession: URLSessionTransport()
        case .native: NativeTransport()
        }
    }
}

/// The JSON the test server's `/echo` route answers with.
struct Echo: Decodable, Sendable {
    let method: String
    let path: String
    let query: String
    let headers: [[String]]
    let body: String
    let bodyLength: Int
    let connection: Int
    let request: Int

    /// The first value of a header, by case-insensitive name.
    func header(_ name: String) -> String? {
        headers.first { $0.first?.lowercased() == name.lowercased() }?.last
    }
}

/// A URL on which nothing listens (a port that was just free).
func refusedURL() -> URL {
    URL(string: "http://127.0.0.1:1/")!
}

/// A weak reference that can be read from any task, to check that objects are freed.
final class WeakReference<Object: AnyObject & Sendable>: Sendable {
    private struct Box: @unchecked Sendable {  // only a weak pointer to a Sendable object
        weak var object: Object?
    }

    private let box = Mutex(Box())

    init() {}

    var value: Object? {
        get { box.withLock { $0.object } }
        set { box.withLock { $0.object = newValue } }
    }
}

/// A value behind a lock, as a class, so that closures can capture it.
final class Locked<Value: Sendable>: Sendable {
    private let mutex: Mutex<Value>

    init(_ value: Value) {
        mutex = Mutex(value)
    }

    func withLock<Result>(_ body: (inout Value) -> Result) -> Result {
        mutex.withLock { body(&$0) }
    }
}
