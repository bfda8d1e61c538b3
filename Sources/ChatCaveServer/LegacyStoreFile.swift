import Foundation

/// The data file of the servers before SQLite: `chatcave-store.json`, one JSON snapshot of the
/// whole store, rewritten on every change. It is only read now, once, to import it into the
/// SQLite store (``SQLiteChatStore``), and then renamed to `chatcave-store.json.migrated`.
///
/// Its formats: 1 (an API key in plain text per user), 2 (one key digest per user) and
/// 3 (several key digests per user); all three are read.
struct LegacyStoreFile {
    /// Why the file cannot be read or set aside.
    struct Failure: Error, CustomStringConvertible {
        /// What went wrong, with the path.
        let description: String
    }

    /// Everything the file holds.
    struct Snapshot: Decodable, Sendable {
        /// The newest format this server reads.
        static let newestFormat = 3

        /// The file format's version: 1, 2 or 3.
        var format: Int
        /// Every user, in sign-up order.
        var users: [StoredUser]
        /// Every room, in creation order.
        var rooms: [Room]
    }

    /// A room as the file holds it: its members and its messages in the order they were posted.
    struct Room: Decodable, Sendable {
        /// The room's id (a UUID).
        var id: String
        /// The unique name.
        var name: String
        /// The ids of the members, in the order they joined.
        var chatterIDs: [String]
        /// The messages, oldest first.
        var messages: [StoredMessage]
    }

    /// The file's name inside the data directory.
    static let fileName = "chatcave-store.json"
    /// The suffix added to the file's name once it was imported.
    static let migratedSuffix = ".migrated"

    /// The file.
    let fileURL: URL

    /// The legacy file of a data directory (which may not exist).
    init(directory: URL) {
        fileURL = directory.appendingPathComponent(Self.fileName)
    }

    /// Whether the data directory holds the file.
    var exists: Bool {
        FileManager.default.fileExists(atPath: fileURL.path)
    }

    /// Reads the snapshot.
    /// - Throws: ``Failure`` when the file cannot be read or decoded, or has a format this
    ///   server does not know (the server then refuses to start, and changes nothing).
    func load() throws(Failure) -> Snapshot {
        do {
            let snapshot = try JSONDecoder().decode(Snapshot.self, from: Data(contentsOf: fileURL))
            guard (1...Snapshot.newestFormat).contains(snapshot.format) else {
                throw Failure(description: "\(fileURL.path) has format \(snapshot.format); this server reads formats 1 to \(Snapshot.newestFormat)")
            }
            return snapshot
        } catch let failure as Failure {
            throw failure
        } catch {
            throw Failure(description: "cannot read \(fileURL.path): \(error)")
        }
    }

    /// Renames the file to `chatcave-store.json.migrated` (or `….migrated.2`, `.3`… when that
    /// name is taken), keeping it beside the database, with its mode.
    /// - Returns: the new path.
    /// - Throws: ``Failure`` when it cannot be renamed.
    @discardableResult
    func setAside() throws(Failure) -> URL {
        let base = fileURL.path + Self.migratedSuffix
        var target = base
        var attempt = 1
        while FileManager.default.fileExists(atPath: target) {
            attempt += 1
            guard attempt <= 1_000 else { throw Failure(description: "cannot find a free name to set \(fileURL.path) aside") }
            target = base + ".\(attempt)"
        }
        guard rename(fileURL.path, target) == 0 else {
            throw Failure(description: "cannot rename \(fileURL.path) to \(target): \(String(cString: strerror(errno)))")
        }
        return URL(fileURLWithPath: target)
    }
}
