import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// Keeps the store's snapshot in one file of a data directory, written atomically.
///
/// The file, `chatcave-store.json`, holds password hashes and API key digests, so it is created
/// with mode 0600 and its directory with 0700. Each save writes a new file beside the old one
/// (created 0600, written, `fsync`ed), renames it over the old one and syncs the directory:
/// a crash leaves the old file or the new one, never half of one, and the secrets are never
/// readable by other users. ``ChatStore`` saves one change at a time and reports a failed save
/// to the client.
final class StorePersistence: Sendable {
    /// Why the data directory cannot be used.
    struct Failure: Error, CustomStringConvertible {
        /// What went wrong, with the path.
        let description: String
    }

    /// The file's name inside the data directory.
    static let fileName = "chatcave-store.json"

    /// The data directory.
    let directory: URL
    /// The data file.
    let fileURL: URL

    /// Uses `directory`, creating it (mode 0700) when missing.
    /// - Throws: ``Failure`` when it cannot be created or is not a directory.
    init(directory: URL) throws {
        self.directory = directory
        self.fileURL = directory.appendingPathComponent(Self.fileName)
        var isDirectory: ObjCBool = false
        if FileManager.default.fileExists(atPath: directory.path, isDirectory: &isDirectory) {
            guard isDirectory.boolValue else { throw Failure(description: "\(directory.path) is not a directory") }
        } else {
            do {
                try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true,
                                                        attributes: [.posixPermissions: 0o700])
            } catch {
                throw Failure(description: "cannot create the data directory \(directory.path): \(error)")
            }
        }
    }

    /// Reads the snapshot, or `nil` when there is no data file yet.
    /// - Throws: ``Failure`` when the file exists but cannot be read or decoded (the server
    ///   refuses to start rather than overwrite data it could not read).
    func load() throws -> ChatStore.Snapshot? {
        guard FileManager.default.fileExists(atPath: fileURL.path) else { return nil }
        do {
            let snapshot = try JSONDecoder().decode(ChatStore.Snapshot.self, from: Data(contentsOf: fileURL))
            guard (1...ChatStore.Snapshot.currentFormat).contains(snapshot.format) else {
                throw Failure(description: "\(fileURL.path) has format \(snapshot.format); this server reads formats 1 to \(ChatStore.Snapshot.currentFormat)")
            }
            return snapshot
        } catch let failure as Failure {
            throw failure
        } catch {
            throw Failure(description: "cannot read \(fileURL.path): \(error)")
        }
    }

    /// Writes a snapshot, replacing the data file.
    /// - Parameter snapshot: the data.
    /// - Throws: ``Failure`` when it cannot be encoded or written; the old file is then intact.
    func save(_ snapshot: ChatStore.Snapshot) throws {
        let data: Data
        do {
            let encoder = JSONEncoder()
            encoder.outputFormatting = [.sortedKeys]
            data = try encoder.encode(snapshot)
        } catch {
            throw Failure(description: "cannot encode the data for \(fileURL.path): \(error)")
        }
        try Self.writeAtomically(data, to: fileURL.path, directory: directory.path)
    }

    /// Writes `data` to a new file created with mode 0600, syncs it, renames it over `path`,
    /// and syncs the directory.
    /// - Throws: ``Failure`` naming the step that failed.
    static func writeAtomically(_ data: Data, to path: String, directory: String) throws {
        let temporary = path + ".tmp-\(getpid())-\(UInt32.random(in: 0...UInt32.max))"
        let fd = open(temporary, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0o600)
        guard fd >= 0 else { throw Failure(description: "cannot create \(temporary): \(String(cString: strerror(errno)))") }
        var failure: String?
        if fchmod(fd, 0o600) != 0 { failure = "fchmod" }
        data.withUnsafeBytes { buffer in
            guard let base = buffer.baseAddress else { return }
            var offset = 0
            while failure == nil, offset < buffer.count {
                let written = write(fd, base + offset, buffer.count - offset)
                if written > 0 {
                    offset += written
                } else if written < 0, errno == EINTR {
                    continue
                } else {
                    failure = "write"
                }
            }
        }
        if failure == nil, fsync(fd) != 0 { failure = "fsync" }
        close(fd)
        if failure == nil, rename(temporary, path) != 0 { failure = "rename" }
        if let failure {
            let reason = String(cString: strerror(errno))
            unlink(temporary)
            throw Failure(description: "\(failure) failed for \(path): \(reason)")
        }
        let directoryFD = open(directory, O_RDONLY | O_DIRECTORY | O_CLOEXEC)
        if directoryFD >= 0 {
            _ = fsync(directoryFD)
            close(directoryFD)
        }
    }
}
