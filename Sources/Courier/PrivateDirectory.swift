import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// A directory for secrets that only its owner can change, and the files in it.
///
/// Every operation opens the directory itself (never through a symbolic link) and checks it
/// first: it must be owned by the current user, and neither group nor others may write to it
/// (like ssh's check of `~/.ssh`). A directory that fails the check is refused with a
/// ``Failure``: nothing in it is read and nothing is written to it, so another
/// local user cannot plant, replace or delete its files. A missing directory is created with
/// mode 0700 whatever the umask (missing parents too). Files are written atomically with mode
/// 0600: a new file beside the old one, synced, renamed over it, then the directory is synced,
/// so a crash leaves the old file or the new one, and the rename itself is durable. A write or
/// removal that need not survive a crash (`durable: false`, the cache's) skips the two syncs,
/// which take milliseconds on a real disk: after a crash such a file may be old, new, empty or
/// cut short, so its reader must check it.
public struct PrivateDirectory: Sendable, CustomStringConvertible {
    /// The directory.
    public let url: URL

    /// Names a directory; nothing is checked or created until a file is read or written.
    public init(url: URL) {
        self.url = url
    }

    /// The path.
    public var description: String { url.path }

    /// Creates the directory when missing (mode 0700), then checks it.
    /// - Throws: ``Failure`` when it cannot be created or is refused.
    public func prepare() throws(Failure) {
        close(try open(creating: true))
    }

    /// The contents of the file `name` in the directory, or `nil` when the directory or the
    /// file does not exist. A symbolic link is not followed.
    /// - Throws: ``Failure`` when the directory is refused or the file cannot be read.
    public func contents(of name: String) throws(Failure) -> Data? {
        let directory = try open(creating: false)
        guard directory >= 0 else { return nil }
        defer { close(directory) }
        let fd = openat(directory, try Self.checked(name), O_RDONLY | O_NOFOLLOW | O_CLOEXEC)
        guard fd >= 0 else {
            if errno == ENOENT { return nil }
            throw .failed("open", path(of: name), errno)
        }
        let handle = FileHandle(fileDescriptor: fd, closeOnDealloc: true)
        do {
            return try handle.readToEnd() ?? Data()
        } catch {
            throw .systemCall("read", path: path(of: name), reason: "\(error)")
        }
    }

    /// Writes `data` to the file `name` atomically with mode 0600, creating the directory
    /// (mode 0700) when missing. When `durable` (the default), the new file is synced before the
    /// rename and the directory after it; otherwise neither is (see the type's documentation).
    /// - Throws: ``Failure`` naming the step that failed; the old file is then unchanged.
    public func write(_ data: Data, to name: String, durable: Bool = true) throws(Failure) {
        let name = try Self.checked(name)
        let directory = try open(creating: true)
        defer { close(directory) }
        let temporary = ".\(name)\(Self.temporaryMarker)\(getpid())-\(UInt32.random(in: 0...UInt32.max))"
        let fd = openat(directory, temporary, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0o600)
        guard fd >= 0 else { throw .failed("create", path(of: temporary), errno) }
        var failure: (step: String, errno: Int32)?
        if fchmod(fd, 0o600) != 0 { failure = ("fchmod", errno) }
        data.withUnsafeBytes { buffer in
            guard let base = buffer.baseAddress else { return }
            var offset = 0
            while failure == nil, offset < buffer.count {
                let written = Glibc.write(fd, base + offset, buffer.count - offset)
                if written > 0 {
                    offset += written
                } else if !(written < 0 && errno == EINTR) {
                    failure = ("write", written < 0 ? errno : EIO)
                }
            }
        }
        if failure == nil, durable, fsync(fd) != 0 { failure = ("fsync", errno) }
        close(fd)
        if failure == nil, renameat(directory, temporary, directory, name) != 0 { failure = ("rename", errno) }
        if let failure {
            unlinkat(directory, temporary, 0)
            throw .failed(failure.step, path(of: name), failure.errno)
        }
        // EINVAL: a file system that cannot sync directories; the rename itself has happened.
        if durable, fsync(directory) != 0, errno != EINVAL { throw .failed("fsync", url.path, errno) }
    }

    /// Removes the file `name` when it exists, and syncs the directory when `durable` (the default).
    /// - Throws: ``Failure`` when the directory is refused or the file cannot be removed.
    public func remove(_ name: String, durable: Bool = true) throws(Failure) {
        let directory = try open(creating: false)
        guard directory >= 0 else { return }
        defer { close(directory) }
        if unlinkat(directory, try Self.checked(name), 0) != 0, errno != ENOENT {
            throw .failed("unlink", path(of: name), errno)
        }
        if durable { _ = fsync(directory) }
    }

    /// What the name of a write's temporary file holds after the target's name:
    /// `.<name>.tmp-<process id>-<random>`.
    static let temporaryMarker = ".tmp-"

    // MARK: - Opening and checking

    func path(of name: String) -> String {
        url.appendingPathComponent(name).path
    }

    private static func checked(_ name: String) throws(Failure) -> String {
        guard !name.isEmpty, name != ".", name != "..", !name.contains("/"), !name.contains("\0") else {
            throw .invalidFileName(name)
        }
        return name
    }

    /// Opens the checked directory; when it is missing, creates it (`creating`) or returns -1.
    /// The caller closes the descriptor.
    func open(creating: Bool) throws(Failure) -> Int32 {
        let path = url.path
        var fd = Glibc.open(path, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC)
        if fd < 0, errno == ENOENT {
            guard creating else { return -1 }
            try createParent()
            if mkdir(path, 0o700) == 0 {
                _ = chmod(path, 0o700)  // mkdir's mode went through the umask; opening needs the owner's bits
            } else if errno != EEXIST {
                throw .failed("mkdir", path, errno)
            }
            fd = Glibc.open(path, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC)
        }
        guard fd >= 0 else {
            if errno == ENOTDIR || errno == ELOOP { throw .notADirectory(path) }
            throw .failed("open", path, errno)
        }
        var status = stat()
        guard fstat(fd, &status) == 0 else {
            let code = errno
            close(fd)
            throw .failed("stat", path, code)
        }
        if status.st_uid != geteuid() {
            close(fd)
            throw .ownedByAnotherUser(path, owner: status.st_uid)
        }
        if status.st_mode & 0o022 != 0 {
            close(fd)
            throw .writableByOthers(path, mode: status.st_mode & 0o7777)
        }
        return fd
    }

    private func createParent() throws(Failure) {
        let parent = url.deletingLastPathComponent()
        guard !FileManager.default.fileExists(atPath: parent.path) else { return }
        do {
            try FileManager.default.createDirectory(at: parent, withIntermediateDirectories: true,
                                                    attributes: [.posixPermissions: 0o700])
        } catch {
            throw .systemCall("mkdir", path: parent.path, reason: "\(error)")
        }
    }
}

extension PrivateDirectory {
    /// Why a ``PrivateDirectory`` refused a directory or failed to read or write a file.
    public enum Failure: Error, Sendable, Equatable, CustomStringConvertible {
        /// The directory belongs to another user (its owner's uid).
        case ownedByAnotherUser(String, owner: uid_t)
        /// Group or others may write to the directory (its mode).
        case writableByOthers(String, mode: mode_t)
        /// The path is not a directory, or is a symbolic link.
        case notADirectory(String)
        /// The file name is empty, `.`, `..`, or contains `/` or NUL.
        case invalidFileName(String)
        /// A step failed: its name, the path and the reason (`strerror`).
        case systemCall(String, path: String, reason: String)

        /// A failed system call: the step, the path and `errno`.
        static func failed(_ step: String, _ path: String, _ code: Int32) -> Failure {
            .systemCall(step, path: path, reason: String(cString: strerror(code)))
        }

        /// What is wrong and what to do, with the path.
        public var description: String {
            switch self {
            case .ownedByAnotherUser(let path, let owner):
                "refusing \(path): it is owned by uid \(owner), not by this user (uid \(geteuid()))"
            case .writableByOthers(let path, let mode):
                "refusing \(path): group or others may write to it (mode \(String(mode, radix: 8))); run chmod 700 on it"
            case .notADirectory(let path):
                "refusing \(path): it is not a directory (or is a symbolic link)"
            case .invalidFileName(let name):
                "'\(name)' is not a plain file name"
            case .systemCall(let step, let path, let reason):
                "\(step) failed for \(path): \(reason)"
            }
        }
    }
}
