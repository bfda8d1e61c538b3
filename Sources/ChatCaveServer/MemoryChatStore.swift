import Foundation
import Synchronization

/// The ChatCave server's data: users, rooms and messages, in memory, optionally kept on disk.
///
/// Reads take one short lock. Every change goes through ``change(_:)``: with a data directory
/// the change is made on a copy, the copy is written to disk, and only then does it become the
/// state — so a change that was answered is on disk, and a change that could not be saved is
/// answered with 500 and never seen. Changes are serialized; reads never wait for the disk.
///
/// The API keys themselves are never stored, only their digests (``User/apiKeyDigests``); the
/// server remembers in memory the last key each user presented or was given
/// (``ChatStore/knownKeys``), so that sign-in can return it again.
///
/// Operations report refusals as ``APIError`` with the contract's statuses and texts.
final class ChatStore: Sendable {
    struct State: Sendable {
        var users: [String: User] = [:]
        var userOrder: [String] = []
        /// User ids by ``TextRules/nameKey(_:)`` of their names.
        var userIDByName: [String: String] = [:]
        /// User ids by ``User/digest(ofKey:)`` of each of their API keys.
        var userIDByKey: [String: String] = [:]
        var rooms: [String: Room] = [:]
        var roomOrder: [String] = []
    }

    let state: Mutex<State>
    /// The last API key each user presented or was given, by user id: memory only, never
    /// saved, and kept apart from ``state`` so that remembering a key never races with a change
    /// (a key here may have been revoked since; ``knownKey(userID:)`` checks).
    let knownKeys = Mutex<[String: String]>([:])
    let persistence: StorePersistence?
    /// Held for the whole of a change with a data directory (copy, save, publish), so that
    /// changes are saved one at a time, in order.
    private let writer = Mutex<Void>(())

    /// Creates a store, loading what the data directory holds. A data file of an older format
    /// (1: an API key in plain text per user; 2: one key digest per user) is rewritten at once
    /// in the current one.
    /// - Parameter dataDirectory: where to keep the data; `nil` (memory only) by default.
    /// - Throws: ``StorePersistence/Failure`` when the directory or its data file cannot be read,
    ///   or an old data file cannot be rewritten.
    init(dataDirectory: URL? = nil) throws {
        let persistence = try dataDirectory.map { try StorePersistence(directory: $0) }
        var state = State()
        if let snapshot = try persistence?.load() {
            state = Self.state(from: snapshot)
            if snapshot.format < Snapshot.currentFormat { try persistence?.save(Self.snapshot(of: state)) }
        }
        self.persistence = persistence
        self.state = Mutex(state)
    }

    /// Rebuilds the state and its indexes from a snapshot, skipping inconsistent entries.
    /// Users whose names became equal under the current rules (`Alice` and `alice` from an
    /// older server) are all kept; the name finds the first of them.
    static func state(from snapshot: Snapshot) -> State {
        var state = State()
        for user in snapshot.users where state.users[user.id] == nil {
            state.users[user.id] = user
            state.userOrder.append(user.id)
            let key = TextRules.nameKey(user.name)
            if state.userIDByName[key] == nil { state.userIDByName[key] = user.id }
            for digest in user.apiKeyDigests { state.userIDByKey[digest] = user.id }
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

    /// Everything in `state`, for the data file.
    static func snapshot(of state: State) -> Snapshot {
        let users = state.userOrder.compactMap { state.users[$0] }
        let rooms = state.roomOrder.compactMap { state.rooms[$0] }
        return Snapshot(format: Snapshot.currentFormat, users: users, rooms: rooms)
    }

    /// Applies one change to the state, saving it first when the store has a data directory.
    ///
    /// With a data directory the change is made on a copy of the state, which replaces the
    /// state only once it is saved; the copy shares its storage with the state until `body`
    /// writes, so a write copies what it touches (a post copies its room's messages, and the
    /// save then encodes the whole store). Without one the change is made in place, under the
    /// lock, so that a post costs the same however long the room's history is (copying it
    /// took about 1.5 ms per post at 10,000 messages in a debug build, in place about 35 µs).
    /// - Parameter body: the change. It must check everything before it writes, and throw (if
    ///   it throws) before its first write: every change of the store does, so what it throws
    ///   leaves the state as it was.
    /// - Returns: what `body` returned.
    /// - Throws: what `body` threw, or ``APIError/notSaved`` (500) when the data file cannot be
    ///   written; the change is then not made.
    func change<Value: Sendable>(_ body: (inout State) throws(APIError) -> Value) throws(APIError) -> Value {
        guard let persistence else {
            return try state.withLock { state throws(APIError) in try body(&state) }
        }
        return try writer.withLock { _ throws(APIError) in
            var next = state.withLock { $0 }
            let result = try body(&next)
            do {
                try persistence.save(Self.snapshot(of: next))
            } catch {
                FileHandle.standardError.write(Data("chatcave: \(error); the change was not made\n".utf8))
                throw .notSaved
            }
            state.withLock { $0 = next }
            return result
        }
    }
}
