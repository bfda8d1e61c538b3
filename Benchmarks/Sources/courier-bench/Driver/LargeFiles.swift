import Foundation

/// The files of the large-body scenarios (12a–12c), made at run time and deleted afterwards: a
/// folder in `/dev/shm` (memory, so that the disk does not set the pace) or, without it, under
/// the build folder. nginx serves the files under `/large/` and stores PUT uploads under
/// `/upload/` in the same folder.
///
/// The folder exists (empty) for every run, because nginx's configuration names it; the big
/// files are written only when a large-body scenario runs.
struct LargeFiles: Sendable {
    /// The file downloaded to a file and uploaded from one (12a, 12b).
    static let big = "big.bin"
    /// The file each of the concurrent streamed downloads reads (12c).
    static let medium = "medium.bin"
    /// Where nginx stores uploads (`/upload/<client>.bin`).
    static let uploads = "upload"
    /// nginx's temporary files for uploads, on the same file system so that they are renamed, not copied.
    static let uploadTemporaries = "upload-temp"
    /// Where the clients write their downloads.
    static let downloads = "downloads"

    /// The folder.
    let folder: URL
    /// The size of ``big`` in bytes.
    let bigBytes: Int64
    /// The size of ``medium`` in bytes.
    let mediumBytes: Int64

    /// Creates the (empty) folder and its subfolders, in `/dev/shm` when there is room for the
    /// files and an upload and a download of the big one at once.
    /// - Throws: when the folder cannot be created.
    init(bigBytes: Int64, mediumBytes: Int64) throws {
        self.bigBytes = bigBytes
        self.mediumBytes = mediumBytes
        let name = "courier-bench-large-\(getpid())"
        let needed = UInt64(3 * bigBytes + mediumBytes)
        if let free = Self.freeBytes(atPath: "/dev/shm"), free > needed + (1 << 30) {
            folder = URL(fileURLWithPath: "/dev/shm").appendingPathComponent(name, isDirectory: true)
        } else {
            folder = try BuildFolder.folder(name)
        }
        for sub in [Self.uploads, Self.uploadTemporaries, Self.downloads] {
            try FileManager.default.createDirectory(at: folder.appendingPathComponent(sub), withIntermediateDirectories: true)
        }
    }

    /// Writes ``big`` and ``medium``, if not already there: a repeating pattern of bytes (not
    /// zeros), 4 MiB at a time.
    /// - Throws: when a file cannot be written.
    func writeFiles() throws {
        for (name, size) in [(Self.big, bigBytes), (Self.medium, mediumBytes)] {
            let url = folder.appendingPathComponent(name)
            if let existing = try? FileManager.default.attributesOfItem(atPath: url.path)[.size] as? Int64, existing == size { continue }
            try Self.write(bytes: size, to: url)
        }
    }

    /// Writes `bytes` of the pattern to `url`, 4 MiB at a time.
    private static func write(bytes: Int64, to url: URL) throws {
        guard FileManager.default.createFile(atPath: url.path, contents: nil) else {
            throw BenchError("cannot create \(url.path)")
        }
        let handle = try FileHandle(forWritingTo: url)
        defer { try? handle.close() }
        var block = Data(count: 4 << 20)
        block.withUnsafeMutableBytes { raw in
            for index in raw.indices { raw[index] = UInt8(truncatingIfNeeded: index &* 131 &+ index >> 12) }
        }
        var left = bytes
        while left > 0 {
            let count = Int(min(left, Int64(block.count)))
            try handle.write(contentsOf: count == block.count ? block : block.prefix(count))
            left -= Int64(count)
        }
    }

    /// Writes `bytes` into a scratch file and deletes it, right before a client writes a file of
    /// that size: the machine is a VM that hands freed memory back to its host (virtio-balloon
    /// free page reporting), and the first touch of such memory costs a fault in the host, which
    /// made whichever client ran first in a round several times slower. The memory this frees
    /// is taken again at once by the client's file.
    /// - Throws: when the file cannot be written.
    func touchMemory(bytes: Int64) throws {
        let url = folder.appendingPathComponent("touch.bin")
        defer { try? FileManager.default.removeItem(at: url) }
        try Self.write(bytes: bytes, to: url)
    }

    /// The file a client's upload is stored in, by nginx.
    func uploaded(by client: ClientKind) -> URL {
        folder.appendingPathComponent(Self.uploads).appendingPathComponent("\(client.rawValue).bin")
    }

    /// The file a client downloads into.
    func download(by client: ClientKind) -> URL {
        folder.appendingPathComponent(Self.downloads).appendingPathComponent("\(client.rawValue).bin")
    }

    /// Deletes every upload and download (not the source files), between runs.
    func removeOutputs() {
        for sub in [Self.uploads, Self.downloads, Self.uploadTemporaries] {
            let url = folder.appendingPathComponent(sub)
            for name in (try? FileManager.default.contentsOfDirectory(atPath: url.path)) ?? [] {
                try? FileManager.default.removeItem(at: url.appendingPathComponent(name))
            }
        }
    }

    /// Deletes the folder and everything in it.
    func remove() {
        try? FileManager.default.removeItem(at: folder)
    }

    /// The bytes free for an unprivileged writer on the file system of `path`.
    private static func freeBytes(atPath path: String) -> UInt64? {
        var stats = statvfs()
        guard statvfs(path, &stats) == 0 else { return nil }
        return UInt64(stats.f_bavail) * UInt64(stats.f_frsize)
    }
}
