import Foundation
import Synchronization

/// The ChatCave server's data: users, rooms and messages, in memory, optionally kept on disk.
///
/// Every operation takes one short lock; nothing slow (hashing, disk) happens under it.
/// Operations that change something bump a version and then persist a snapshot, when the
/// store has a data directory (see `ChatStore+Persistence.swift`), before they return — so a
/// change that was answered is on disk.
///
/// Operations report refusals as ``APIError`` with the contract's statuses and texts.
final class ChatStore: Sendable {
    /// The longest user or room name, in characters.
    static let maxNameLength = 64
    /// The longest message text, in characters.
    static let maxTextLength = 4_000

    struct State: Sendable {
        var users: [String: User] = [:]
        var userOrder: [String] = []
        var userIDByName: [String: String] = [:]
        var userIDByKey: [String: String] = [:]
        var rooms: [String: Room] = [:]
        var roomOrder: [String] = []
        var version: UInt64 = 0
    }

    let state: Mutex<State>
    let persistence: StorePersistence?

    /// Creates a store, loading what the data directory holds.
    /// - Parameter dataDirectory: where to keep the data; `nil` (memory only) by default.
    /// - Throws: ``StorePersistence/Failure`` when the directory or its data file cannot be read.
    init(dataDirectory: URL? = nil) throws {
        let persistence = try dataDirectory.map { try StorePersistence(directory: $0) }
        var state = State()
        if let snapshot = try persistence?.load() {
            state = Self.state(from: snapshot)
        }
        self.persistence = persistence
        self.state = Mutex(state)
    }

    /// Rebuilds the state and its indexes from a snapshot, skipping inconsistent entries.
    static func state(from snapshot: Snapshot) -> State {
        var state = State()
        for user in snapshot.users where state.users[user.id] == nil && state.userIDByName[user.name] == nil {
            state.users[user.id] = user
            state.userOrder.append(user.id)
            state.userIDByName[user.name] = user.id
            state.userIDByKey[user.apiKey] = user.id
        }
        for var room in snapshot.rooms where state.rooms[room.id] == nil {
            var seen = Set<String>()
            room.chatterIDs = room.chatterIDs.filter { state.users[$0] != nil && seen.insert($0).inserted }
            room.reindex()
            state.rooms[room.id] = room
            state.roomOrder.append(room.id)
        }
        return state
    }

    /// A copy of everything, for the data file.
    func snapshot() -> (Snapshot, UInt64) {
        state.withLock { state in
            let users = state.userOrder.compactMap { state.users[$0] }
            let rooms = state.roomOrder.compactMap { state.rooms[$0] }
            return (Snapshot(format: 1, users: users, rooms: rooms), state.version)
        }
    }

    /// Writes the current state when the store has a data directory. Called after every change.
    func persist() {
        guard let persistence else { return }
        let (snapshot, version) = snapshot()
        persistence.save(snapshot, version: version)
    }

    /// Validates and trims a user or room name.
    /// - Throws: 406 when empty, too long or holding control characters.
    static func validName(_ raw: String?, what: String) throws(APIError) -> String {
        let name = (raw ?? "").trimmingCharacters(in: .whitespacesAndNewlines)
        guard !name.isEmpty else { throw .rejected("\(what) must not be empty") }
        guard name.count <= maxNameLength else { throw .rejected("\(what) must be at most \(maxNameLength) characters") }
        guard !name.unicodeScalars.contains(where: { $0.properties.generalCategory == .control }) else {
            throw .rejected("\(what) must not contain control characters")
        }
        return name
    }
}
