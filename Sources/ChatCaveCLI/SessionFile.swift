import ChatCave
import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// The signed-in user that the CLI remembers between runs, in `session.json` of
/// `$CHATCAVE_HOME` (by default `~/.chatcave`).
///
/// It holds the user's API key, so the file is created with mode 0600 (and its directory with
/// 0700), written to a temporary file and renamed into place: never readable by other users,
/// never half-written. A session belongs to one server; another server starts without one.
struct SessionFile: Sendable {
    /// What the file holds.
    struct Contents: Codable, Sendable, Equatable {
        /// The server the session belongs to.
        var server: String
        /// The user, with its API key.
        var user: User
    }

    /// The file.
    let url: URL

    /// The file for an environment: `$CHATCAVE_HOME/session.json`, else `$HOME/.chatcave/session.json`.
    init(environment: [String: String]) {
        let directory: URL
        if let home = environment["CHATCAVE_HOME"], !home.isEmpty {
            directory = URL(fileURLWithPath: home, isDirectory: true)
        } else {
            let home = environment["HOME"].flatMap { $0.isEmpty ? nil : $0 } ?? NSHomeDirectory()
            directory = URL(fileURLWithPath: home, isDirectory: true).appendingPathComponent(".chatcave", isDirectory: true)
        }
        url = directory.appendingPathComponent("session.json")
    }

    /// The saved session for `server`, or `nil` (none, another server's, or unreadable).
    func load(server: URL) -> User? {
        guard let data = try? Data(contentsOf: url),
              let contents = try? JSONDecoder().decode(Contents.self, from: data),
              contents.server == server.absoluteString else { return nil }
        return contents.user
    }

    /// Saves the session, mode 0600, atomically.
    /// - Throws: when the directory or the file cannot be written.
    func save(_ user: User, server: URL) throws {
        let directory = url.deletingLastPathComponent()
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true,
                                                attributes: [.posixPermissions: 0o700])
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.prettyPrinted, .sortedKeys]
        let data = try encoder.encode(Contents(server: server.absoluteString, user: user))
        let temporary = url.path + ".tmp-\(getpid())"
        unlink(temporary)
        let fd = open(temporary, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0o600)
        guard fd >= 0 else { throw CocoaError(.fileWriteNoPermission, userInfo: [NSFilePathErrorKey: temporary]) }
        var ok = fchmod(fd, 0o600) == 0
        data.withUnsafeBytes { buffer in
            guard let base = buffer.baseAddress else { return }
            var offset = 0
            while ok, offset < buffer.count {
                let written = write(fd, base + offset, buffer.count - offset)
                if written > 0 { offset += written } else if !(written < 0 && errno == EINTR) { ok = false }
            }
        }
        ok = ok && fsync(fd) == 0
        close(fd)
        guard ok, rename(temporary, url.path) == 0 else {
            unlink(temporary)
            throw CocoaError(.fileWriteUnknown, userInfo: [NSFilePathErrorKey: url.path])
        }
    }

    /// Forgets the session.
    func remove() {
        try? FileManager.default.removeItem(at: url)
    }
}
