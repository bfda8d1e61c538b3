import Foundation
import Synchronization
#if canImport(Glibc)
import Glibc
#endif

/// A store in one JSON file, readable and writable only by its owner (mode 0600).
///
/// Every save writes a new file beside the old one, with mode 0600 from its creation, and
/// renames it over the old one, so a crash never leaves a half-written store and the secrets
/// are never readable by other users, not even for a moment.
public final class FileCredentialStore: CredentialStore, CustomStringConvertible {
    /// The file.
    public let fileURL: URL
    private let lock = Mutex(())

    /// Creates a store at `fileURL`; the file is created on the first save.
    public init(fileURL: URL) {
        self.fileURL = fileURL
    }

    /// The stored credential, or `nil`.
    /// - Throws: when the file exists but cannot be read or decoded.
    public func load(for key: String) throws -> Credential? {
        try lock.withLock { _ in try readAll()[key] }
    }

    /// Stores the credential, rewriting the file atomically with mode 0600.
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
        guard FileManager.default.fileExists(atPath: fileURL.path) else { return [:] }
        return try JSONDecoder().decode([String: Credential].self, from: Data(contentsOf: fileURL))
    }

    private func writeAll(_ all: [String: Credential]) throws {
        let data = try JSONEncoder().encode(all)
        try FileManager.default.createDirectory(at: fileURL.deletingLastPathComponent(), withIntermediateDirectories: true)
        try Self.writeAtomically(data, to: fileURL.path, mode: 0o600)
    }

    /// Writes `data` to a temporary file created with `mode`, syncs it, and renames it over `path`.
    static func writeAtomically(_ data: Data, to path: String, mode: mode_t) throws {
        let temporary = path + ".tmp-\(getpid())-\(UInt32.random(in: 0...UInt32.max))"
        let fd = open(temporary, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, mode)
        guard fd >= 0 else { throw CocoaError(.fileWriteNoPermission, userInfo: [NSFilePathErrorKey: temporary]) }
        var ok = fchmod(fd, mode) == 0
        data.withUnsafeBytes { buffer in
            var offset = 0
            while ok, offset < buffer.count {
                let written = write(fd, buffer.baseAddress! + offset, buffer.count - offset)
                if written > 0 { offset += written } else if errno != EINTR { ok = false }
            }
        }
        ok = ok && fsync(fd) == 0
        close(fd)
        guard ok, rename(temporary, path) == 0 else {
            unlink(temporary)
            throw CocoaError(.fileWriteUnknown, userInfo: [NSFilePathErrorKey: path])
        }
    }
}
