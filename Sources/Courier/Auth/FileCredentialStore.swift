import Foundation
import Synchronization
#if canImport(Glibc)
import Glibc
#endif

/// A store in one JSON file, readable and writable only by its owner (mode 0600), in a
/// ``PrivateDirectory``.
///
/// Every save writes a new file beside the old one, with mode 0600 from its creation, renames
/// it over the old one and syncs the directory, so a crash never leaves a half-written store
/// and the secrets are never readable by other users, not even for a moment. The directory is
/// created with mode 0700 when missing; one owned by another user, or writable by group or
/// others, is refused: loads and saves throw ``PrivateDirectory/Failure`` and the file in it
/// is never read.
public final class FileCredentialStore: CredentialStore, CustomStringConvertible {
    /// The file.
    public let fileURL: URL
    private let directory: PrivateDirectory
    private let lock = Mutex(())

    /// Creates a store at `fileURL`; the file is created on the first save.
    public init(fileURL: URL) {
        self.fileURL = fileURL
        directory = PrivateDirectory(url: fileURL.deletingLastPathComponent())
    }

    /// The stored credential, or `nil`.
    /// - Throws: ``PrivateDirectory/Failure`` when the directory is refused; an error when the
    ///   file exists but cannot be read or decoded.
    public func load(for key: String) throws -> Credential? {
        try lock.withLock { _ in try readAll()[key] }
    }

    /// Stores the credential, rewriting the file atomically with mode 0600.
    /// - Throws: ``PrivateDirectory/Failure`` when the directory is refused or the write fails.
    public func save(_ credential: Credential, for key: String) throws {
        try lock.withLock { _ in
            var all = try readAll()
            all[key] = credential
            try writeAll(all)
        }
    }

    /// Forgets the credential.
    public func remove(for key: String) throws {
        try lock.withLock { _ in
            var all = try readAll()
            all.removeValue(forKey: key)
            try writeAll(all)
        }
    }

    /// The path; never the contents.
    public var description: String { "FileCredentialStore(\(fileURL.path))" }

    private func readAll() throws -> [String: Credential] {
        guard let data = try directory.contents(of: fileURL.lastPathComponent) else { return [:] }
        return try JSONDecoder().decode([String: Credential].self, from: data)
    }

    private func writeAll(_ all: [String: Credential]) throws {
        try directory.write(try JSONEncoder().encode(all), to: fileURL.lastPathComponent)
    }

    /// Writes `data` atomically, mode 0600, as the file `path` of a ``PrivateDirectory``
    /// (`mode` must be 0600). Kept for `DiskCacheStore` until it uses ``PrivateDirectory`` itself.
    static func writeAtomically(_ data: Data, to path: String, mode: mode_t) throws {
        let url = URL(fileURLWithPath: path)
        try PrivateDirectory(url: url.deletingLastPathComponent()).write(data, to: url.lastPathComponent)
    }
}
