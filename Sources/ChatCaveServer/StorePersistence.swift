import Foundation
import Synchronization
#if canImport(Glibc)
import Glibc
#endif

/// Keeps the store's snapshot in one file of a data directory, written atomically.
///
/// The file, `chatcave-store.json`, holds password hashes and API keys, so it is created with
/// mode 0600 and its directory with 0700. Each save writes a new file beside the old one
/// (created 0600, written, `fsync`ed), renames it over the old one and syncs the directory:
/// a crash leaves the old file or the new one, never half of one, and the secrets are never
/// readable by other users. Saves are serialized; a snapshot older than the last one written
/// is skipped, so concurrent changes never roll the file back.
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
    private let lastWritten = Mutex<UInt64>(0)

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
            guard snapshot.format == 1 else {
                throw Failure(description: "\(fileURL.path) has format \(snapshot.format); this server reads format 1")
            }
            return snapshot
        } catch let failure as Failure {
            throw failure
        } catch {
            throw Failure(description: "cannot read \(fileURL.path): \(error)")
        }
    }

    /// Writes a snapshot unless a newer one was written already. Failures are reported on
    /// standard error; the data stays in memory.
    /// - Parameters:
    ///   - snapshot: the data.
    ///   - version: the store's version when the snapshot was taken.
    func save(_ snapshot: ChatStore.Snapshot, version: UInt64) {
        lastWritten.withLock { written in
            guard version > written else { return }
            do {
                let encoder = JSONEncoder()
                encoder.outputFormatting = [.sortedKeys]
                try Self.writeAtomically(try encoder.encode(snapshot), to: fileURL.path, directory: directory.path)
                written = version
            } catch {
                FileHandle.standardError.write(Data("chatcave: cannot save \(fileURL.path): \(error)\n".utf8))
            }
        }
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
