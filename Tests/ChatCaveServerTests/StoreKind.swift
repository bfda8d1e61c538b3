@testable import ChatCaveServer
import Foundation
import Testing

/// The two stores of the ChatCave server, for tests that run on each.
enum StoreKind: String, CaseIterable, Sendable, CustomTestStringConvertible {
    /// ``MemoryChatStore``: no data directory.
    case memory
    /// ``SQLiteChatStore`` in a new temporary data directory.
    case sqlite

    var testDescription: String { rawValue }

    /// A new temporary directory path (not created).
    static func temporaryDirectory() -> URL {
        FileManager.default.temporaryDirectory.appendingPathComponent("chatcave-server-\(UUID().uuidString)", isDirectory: true)
    }

    /// A new, empty store of this kind, and the data directory to remove afterwards (SQLite).
    func makeStore() throws -> (store: any ChatStore, directory: URL?) {
        switch self {
        case .memory:
            return (MemoryChatStore(), nil)
        case .sqlite:
            let directory = Self.temporaryDirectory()
            return (try SQLiteChatStore(directory: directory, synchronous: .normal), directory)
        }
    }
}
