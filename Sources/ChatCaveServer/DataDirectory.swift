import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// The server's data directory: created with mode 0700 when missing, and the files in it that
/// hold secrets (password hashes, API key digests) kept at mode 0600.
enum DataDirectory {
    /// Why the data directory cannot be used.
    struct Failure: Error, CustomStringConvertible {
        /// What went wrong, with the path.
        let description: String
    }

    /// Makes sure `directory` exists (creating it, mode 0700) and is a directory. It is made
    /// with mode 0700 in the one `mkdir` call, never wider for a moment (a stop between a wider
    /// `mkdir` and a `chmod` would leave it readable for good); missing parents are made as
    /// usual.
    /// - Throws: ``Failure`` when it cannot be created or is not a directory.
    static func prepare(_ directory: URL) throws(Failure) {
        var isDirectory: ObjCBool = false
        if FileManager.default.fileExists(atPath: directory.path, isDirectory: &isDirectory) {
            guard isDirectory.boolValue else { throw Failure(description: "\(directory.path) is not a directory") }
            return
        }
        do {
            try FileManager.default.createDirectory(at: directory.deletingLastPathComponent(), withIntermediateDirectories: true)
        } catch {
            throw Failure(description: "cannot create the data directory \(directory.path): \(error)")
        }
        if mkdir(directory.path, 0o700) != 0 {
            let code = errno
            // Made meanwhile by another process: used as any existing directory is.
            if code == EEXIST, FileManager.default.fileExists(atPath: directory.path, isDirectory: &isDirectory),
               isDirectory.boolValue { return }
            throw Failure(description: "cannot create the data directory \(directory.path): \(String(cString: strerror(code)))")
        }
        // The umask may narrow 0700, never widen it; the chmod makes it exact.
        guard chmod(directory.path, 0o700) == 0 else {
            throw Failure(description: "cannot set the mode of \(directory.path) to 0700: \(String(cString: strerror(errno)))")
        }
    }

    /// Creates an empty file at `path` with mode 0600 when there is none; sets an existing
    /// one to mode 0600. Files that do not exist are left alone when `create` is `false`.
    /// - Throws: ``Failure`` when the file cannot be created or its mode cannot be set.
    static func makePrivate(_ path: String, create: Bool) throws(Failure) {
        let fd = open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW | (create ? O_CREAT : 0), 0o600)
        guard fd >= 0 else {
            if errno == ENOENT, !create { return }
            throw Failure(description: "cannot open \(path): \(String(cString: strerror(errno)))")
        }
        defer { close(fd) }
        guard fchmod(fd, 0o600) == 0 else {
            throw Failure(description: "cannot set the mode of \(path) to 0600: \(String(cString: strerror(errno)))")
        }
    }
}
