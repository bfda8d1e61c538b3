import Foundation
import Glibc
import CourierTLS

/// An open partial download file: the system calls a download makes, each failure turned into
/// ``HTTPConnectionError/cannotWriteFile`` naming the step and the path.
///
/// The file is opened with mode `0600` (when created), without following a symbolic link, and
/// locked (`flock`, exclusive, non-blocking): a second download to the same destination at the
/// same time fails at once instead of interleaving its bytes. Used by one task at a time.
final class DownloadFile {
    private var descriptor: Int32
    let path: String

    /// Opens (creating it if needed) and locks the file at `path`.
    init(path: String) throws(HTTPConnectionError) {
        guard let file = try Self.tryOpening(path) else {
            throw .cannotWriteFile.with(detail: "another download to the same file is running (\(path))")
        }
        self.path = path
        descriptor = file
    }

    /// Opens and locks the file at `path`, waiting up to `patience` while someone else holds its
    /// lock. A child process that the program starts (`posix_spawn`, `fork`) shares every open
    /// file, and so its lock, until it runs its new program, a few milliseconds later: a download
    /// that follows another to the same file at once can meet the lock the first one released.
    /// A download that still runs holds it far longer, and the wait ends with
    /// ``HTTPConnectionError/cannotWriteFile``.
    static func opening(_ path: String, patience: Duration = .seconds(1)) async throws(HTTPConnectionError) -> DownloadFile {
        let deadline = ContinuousClock.now + patience
        while ContinuousClock.now < deadline {
            if let descriptor = try tryOpening(path) { return DownloadFile(locked: descriptor, path: path) }
            try? await Task.sleep(for: .milliseconds(10))
        }
        return try DownloadFile(path: path)
    }

    private init(locked descriptor: Int32, path: String) {
        self.descriptor = descriptor
        self.path = path
    }

    /// Opens `path` and takes its lock: the descriptor, or `nil` when someone else holds the lock.
    private static func tryOpening(_ path: String) throws(HTTPConnectionError) -> Int32? {
        let descriptor = Glibc.open(path, O_RDWR | O_CREAT | O_NOFOLLOW | O_CLOEXEC, 0o600)
        guard descriptor >= 0 else { throw failure("open", path) }
        guard flock(descriptor, LOCK_EX | LOCK_NB) == 0 else {
            let code = errno
            Glibc.close(descriptor)
            if code == EWOULDBLOCK { return nil }
            throw failure("lock", path, code)
        }
        return descriptor
    }

    deinit { close() }

    /// Closes the file (and releases its lock); later calls do nothing.
    func close() {
        guard descriptor >= 0 else { return }
        Glibc.close(descriptor)
        descriptor = -1
    }

    /// Cuts the file to `length` bytes and moves the write position there.
    func truncate(to length: Int64) throws(HTTPConnectionError) {
        guard ftruncate(descriptor, off_t(length)) == 0 else { throw Self.failure("truncate", path) }
        guard lseek(descriptor, off_t(length), SEEK_SET) >= 0 else { throw Self.failure("seek", path) }
    }

    /// Feeds the first `length` bytes of the file to `hasher`, reading 256 KiB at a time.
    func hashPrefix(_ length: Int64, into hasher: inout SHA256Hasher) throws(HTTPConnectionError) {
        var buffer = [UInt8](repeating: 0, count: 256 << 10)
        var offset: Int64 = 0
        while offset < length {
            let want = Int(min(Int64(buffer.count), length - offset))
            let got = buffer.withUnsafeMutableBytes { pread(descriptor, $0.baseAddress, want, off_t(offset)) }
            if got < 0, errno == EINTR { continue }
            guard got > 0 else {
                throw got == 0 ? .cannotWriteFile.with(detail: "the partial file \(path) is shorter than expected")
                               : Self.failure("read", path)
            }
            buffer.withUnsafeBytes { hasher.update(UnsafeRawBufferPointer(rebasing: $0[..<got])) }
            offset += Int64(got)
        }
    }

    /// Appends `chunk` at the write position, all of it.
    func write(_ chunk: Data) throws(HTTPConnectionError) {
        let failed: Int32? = chunk.withUnsafeBytes { raw in
            var done = 0
            while done < raw.count {
                let count = Glibc.write(descriptor, raw.baseAddress! + done, raw.count - done)
                if count < 0 {
                    if errno == EINTR { continue }
                    return errno
                }
                done += count
            }
            return nil
        }
        if let failed { throw Self.failure("write", path, failed) }
    }

    /// Flushes the file's bytes to the disk.
    func sync() throws(HTTPConnectionError) {
        guard fsync(descriptor) == 0 else { throw Self.failure("fsync", path) }
    }

    /// Sets the file's permission bits.
    func setPermissions(_ mode: Int) throws(HTTPConnectionError) {
        guard fchmod(descriptor, mode_t(mode & 0o7777)) == 0 else { throw Self.failure("chmod", path) }
    }

    /// Renames the file over `destination` (atomically: readers see the old file or the whole
    /// new one), then syncs the directory so that the rename survives a crash.
    func rename(to destination: String) throws(HTTPConnectionError) {
        guard Glibc.rename(path, destination) == 0 else { throw Self.failure("rename to \(destination)", path) }
        Self.syncDirectory(of: destination)
    }

    /// Writes `data` to `path` atomically with mode `0600`: a temporary file beside it, synced,
    /// then renamed over it.
    static func writeAtomically(_ data: Data, to path: String) throws(HTTPConnectionError) {
        let temporary = path + ".tmp"
        unlink(temporary)
        let file = try DownloadFile(path: temporary)
        defer { file.close() }
        do {
            try file.write(data)
            try file.sync()
            try file.rename(to: path)
        } catch {
            unlink(temporary)
            throw error
        }
    }

    /// Best effort: a failed directory sync leaves a correct file that a crash might un-rename.
    private static func syncDirectory(of path: String) {
        let directory = Glibc.open((path as NSString).deletingLastPathComponent, O_RDONLY | O_DIRECTORY | O_CLOEXEC)
        guard directory >= 0 else { return }
        _ = fsync(directory)
        Glibc.close(directory)
    }

    private static func failure(_ step: String, _ path: String, _ code: Int32 = errno) -> HTTPConnectionError {
        .cannotWriteFile.with(detail: "\(step) failed for \(path): \(String(cString: strerror(code)))")
    }
}
