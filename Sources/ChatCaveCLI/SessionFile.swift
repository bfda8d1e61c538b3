import ChatCave
import Courier
import Foundation

/// The signed-in user that the CLI remembers between runs, in `session.json` of
/// `$CHATCAVE_HOME` (by default `~/.chatcave`).
///
/// It holds the user's API key, so it lives in a ``PrivateDirectory``: the directory is
/// created with mode 0700, and one owned by another user or writable by group or others is
/// refused (the session in it is not read, and none is saved there). The file is created with
/// mode 0600, written to a temporary file and renamed into place, and the directory is synced:
/// never readable by other users, never half-written. A session belongs to one server; another
/// server starts without one.
struct SessionFile: Sendable {
    /// What the file holds.
    struct Contents: Codable, Sendable, Equatable {
        /// The server the session belongs to.
        var server: String
        /// The user, with its API key.
        var user: User
    }

    /// The file's name inside the directory.
    static let name = "session.json"

    /// The directory.
    let directory: PrivateDirectory

    /// The file.
    var url: URL { directory.url.appendingPathComponent(Self.name) }

    /// The file for an environment: `$CHATCAVE_HOME/session.json`, else `$HOME/.chatcave/session.json`.
    init(environment: [String: String]) {
        if let home = environment["CHATCAVE_HOME"], !home.isEmpty {
            directory = PrivateDirectory(url: URL(fileURLWithPath: home, isDirectory: true))
        } else {
            let home = environment["HOME"].flatMap { $0.isEmpty ? nil : $0 } ?? NSHomeDirectory()
            directory = PrivateDirectory(url: URL(fileURLWithPath: home, isDirectory: true)
                .appendingPathComponent(".chatcave", isDirectory: true))
        }
    }

    /// The saved session for `server`, or `nil` (none, another server's, or undecodable).
    /// - Throws: ``PrivateDirectory/Failure`` when the directory is refused or the file unreadable.
    func load(server: URL) throws(PrivateDirectory.Failure) -> User? {
        guard let data = try directory.contents(of: Self.name),
              let contents = try? JSONDecoder().decode(Contents.self, from: data),
              contents.server == server.absoluteString else { return nil }
        return contents.user
    }

    /// Saves the session, mode 0600, atomically.
    /// - Throws: ``PrivateDirectory/Failure`` when the directory is refused or cannot be written.
    func save(_ user: User, server: URL) throws {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.prettyPrinted, .sortedKeys]
        try directory.write(try encoder.encode(Contents(server: server.absoluteString, user: user)), to: Self.name)
    }

    /// Forgets the session.
    /// - Throws: ``PrivateDirectory/Failure`` when the directory is refused or the file cannot be removed.
    func remove() throws(PrivateDirectory.Failure) {
        try directory.remove(Self.name)
    }
}
