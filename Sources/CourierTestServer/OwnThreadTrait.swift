import CourierWire
import Testing

/// A Swift Testing trait that runs each test on a thread of its own (``ThreadTaskExecutor``),
/// for tests that block: blocking sockets, child processes, sleeps. Without it, a blocking test
/// holds one of the few threads of Swift's cooperative pool, and every test running in parallel
/// waits for it.
///
/// ```swift
/// @Suite("My server", .ownThread)
/// struct MyServerTests { ... }
/// ```
///
/// On a suite it applies to each of its tests and test cases.
public struct OwnThreadTrait: SuiteTrait, TestTrait, TestScoping {
    /// Applies to every test of a suite.
    public var isRecursive: Bool { true }

    /// Runs one test case on its own thread; a suite itself runs as usual.
    public func provideScope(for test: Test, testCase: Test.Case?,
                             performing function: @Sendable () async throws -> Void) async throws {
        guard testCase != nil else { return try await function() }
        try await ThreadTaskExecutor.run(name: "test") { try await function() }
    }
}

extension Trait where Self == OwnThreadTrait {
    /// Runs each test on a thread of its own, so that blocking calls in it stall no other test.
    public static var ownThread: Self { OwnThreadTrait() }
}
