import Foundation
#if canImport(Glibc)
import Glibc
#endif

extension PrivateDirectory {
    /// A regular file in the directory, as a listing found it.
    struct ListedFile: Sendable, Equatable {
        /// Its name in the directory.
        var name: String
        /// Its size in bytes; without `measuring`, 0 where the listing had no need to look.
        var size: Int
        /// When it was last written (seconds since 1970); without `measuring`, 0 where the listing
        /// had no need to look.
        var modified: Double
    }

    /// The regular files in the directory whose names start with `prefix` and end with `suffix`
    /// (one that starts with `.`, as the temporary files of ``write(_:to:durable:)`` do, only when
    /// `prefix` does too),
    /// read with `readdir` after the directory passed its check; with `measuring`, each one's size
    /// and modification time too (one `fstatat` per file, symbolic links not followed). Names are
    /// compared as bytes, and only a match is turned into a string. A missing directory has none.
    /// - Throws: ``Failure`` when the directory is refused or cannot be read.
    func files(startingWith prefix: String = "", endingWith suffix: String, measuring: Bool) throws(Failure) -> [ListedFile] {
        let directory = try open(creating: false)
        guard directory >= 0 else { return [] }
        // fdopendir takes over a descriptor of its own, closed by closedir (close-on-exec, as
        // every descriptor here: a child process started meanwhile must not inherit it).
        let listed = fcntl(directory, F_DUPFD_CLOEXEC, 0)
        close(directory)
        guard listed >= 0, let stream = fdopendir(listed) else {
            let code = errno
            if listed >= 0 { close(listed) }
            throw .failed("opendir", url.path, code)
        }
        defer { closedir(stream) }
        let head = Array(prefix.utf8), tail = Array(suffix.utf8)
        var found: [ListedFile] = []
        while true {
            errno = 0
            guard let entry = readdir(stream) else {
                if errno != 0 { throw .failed("readdir", url.path, errno) }
                break
            }
            let matched = withUnsafeMutablePointer(to: &entry.pointee.d_name) { tuple -> String? in
                let name = UnsafeRawPointer(tuple).assumingMemoryBound(to: CChar.self)
                let length = strlen(name)
                guard length >= head.count + tail.count, name[0] != CChar(UInt8(ascii: ".")) || head.first == UInt8(ascii: "."),
                      memcmp(name, head, head.count) == 0, memcmp(name + length - tail.count, tail, tail.count) == 0 else { return nil }
                return String(cString: name)
            }
            guard let name = matched else { continue }
            var file = ListedFile(name: name, size: 0, modified: 0)
            let type = entry.pointee.d_type
            if measuring || type == UInt8(DT_UNKNOWN) {
                var status = stat()
                guard fstatat(dirfd(stream), name, &status, AT_SYMLINK_NOFOLLOW) == 0,
                      status.st_mode & S_IFMT == S_IFREG else { continue }
                file.size = Int(status.st_size)
                file.modified = Double(status.st_mtim.tv_sec) + Double(status.st_mtim.tv_nsec) / 1e9
            } else if type != UInt8(DT_REG) {
                continue
            }
            found.append(file)
        }
        return found
    }

    /// Removes the temporary files of writes that never finished (a process that stopped between
    /// creating one and renaming it over its target) once they are `age` seconds old: a write
    /// takes milliseconds, so a younger one may still be under way in another process.
    /// - Returns: how many it removed.
    @discardableResult
    func removeAbandonedTemporaries(olderThan age: Double) -> Int {
        guard let files = try? files(startingWith: ".", endingWith: "", measuring: true) else { return 0 }
        let cutoff = Date().timeIntervalSince1970 - age
        var removed = 0
        for file in files where file.name.contains(Self.temporaryMarker) && file.modified < cutoff {
            if (try? remove(file.name, durable: false)) != nil { removed += 1 }
        }
        return removed
    }
}
