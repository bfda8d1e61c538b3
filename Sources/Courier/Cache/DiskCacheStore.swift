import CourierTLS
import Foundation

/// Cached responses in a directory: one file per URL and partition, written atomically, checked on read.
///
/// The directory is a ``PrivateDirectory``: created with mode 0700, files mode 0600, and a
/// directory owned by another user or writable by group or others is refused (the store is not
/// made, so the cache stays in memory), so no other local user can plant or read entries.
/// Each file holds the JSON of the URL's variants followed by a line with the SHA-256 of that
/// JSON. A file whose checksum does not match — truncated by a crash, or corrupted — is deleted
/// and treated as a miss, never served. Because of that check, files are written without
/// syncing them to the disk (``PrivateDirectory/write(_:to:durable:)``): a sync takes
/// milliseconds, and a crash can only cost entries. Removals that must last (an invalidation, a
/// response a `304` made unfit, a wipe) sync the directory once after their last file, so that
/// a crash cannot bring back what they dropped; evictions do not.
///
/// The directory is kept under its byte capacity by deleting the least recently written files.
/// The bytes it holds are counted as entries are written (``DiskCacheUsage``, from one scan when
/// the store is made), and only a write that takes the count past the capacity scans the
/// directory: it then deletes the oldest files until the directory holds at most 7/8 of its
/// capacity, so that the next scan is far off. A scan that fails keeps the count. Several
/// processes sharing a directory count only their own writes between their scans, so together
/// they can exceed the capacity by up to an eighth of it per other process until the next scan.
/// Finding a URL's entries lists the file names without measuring them. A store removes, when it
/// is made, the temporary files of writes that a crash cut short (older than 10 minutes).
struct DiskCacheStore: Sendable {
    private struct Record: Codable {
        var key: String
        var variants: [CachedResponse]
    }

    let directory: PrivateDirectory
    let capacity: Int
    /// How old a temporary file must be before a new store takes it for the remains of a write
    /// that a crash cut short, and removes it (10 minutes).
    static let abandonedAfter: Double = 600
    /// The bytes the directory holds, as counted since the last scan.
    let usage = DiskCacheUsage()

    /// A store in `directory`, created (mode 0700) when missing, whose files are measured once;
    /// `nil` when the directory is refused.
    init?(directory url: URL, capacity: Int) {
        directory = PrivateDirectory(url: url)
        self.capacity = capacity
        do { try directory.prepare() } catch { return nil }
        directory.removeAbandonedTemporaries(olderThan: Self.abandonedAfter)
        usage.reset(to: entries() ?? [])
    }

    func variants(for key: String) -> [CachedResponse]? {
        let name = fileName(for: key)
        guard let data = try? directory.contents(of: name) else { return nil }
        guard let record = Self.decode(data), record.key == key else {
            remove(files: [name])  // corrupt or truncated: drop it
            return nil
        }
        return record.variants
    }

    func set(_ variants: [CachedResponse], for key: String) {
        guard let json = try? JSONEncoder().encode(Record(key: key, variants: variants)), json.count <= capacity else { return }
        var data = json
        data.append(contentsOf: Array("\n".utf8) + Array(Digest.hex(Digest.sha256(json)).utf8))
        let name = fileName(for: key)
        if (try? directory.write(data, to: name, durable: false)) != nil { usage.record(name, size: data.count) }
    }

    func remove(_ key: String) {
        remove(files: [fileName(for: key)], durably: true)
    }

    func removeAll() {
        remove(files: names(), durably: true)
    }

    /// Removes the entries of one URL (the key's part before any partition), in every partition.
    func removeAll(ofURL url: String) {
        remove(files: names(startingWith: Self.urlPart(url) + "-"), durably: true)
    }

    /// Removes `files`; `durably` syncs the directory once, after the last.
    private func remove(files: [String], durably: Bool = false) {
        for (index, name) in files.enumerated() {
            try? directory.remove(name, durable: durably && index == files.count - 1)
            usage.record(name, size: 0)
        }
    }

    /// `<hash of the URL>-<hash of the whole key>.cache`, so that one URL's partitions share a prefix.
    private func fileName(for key: String) -> String {
        let url = key.split(separator: "\u{0}", maxSplits: 1, omittingEmptySubsequences: false).first.map(String.init) ?? key
        return Self.urlPart(url) + "-" + String(Digest.hex(Digest.sha256(Array(key.utf8))).prefix(32)) + ".cache"
    }

    private static func urlPart(_ url: String) -> String {
        String(Digest.hex(Digest.sha256(Array(url.utf8))).prefix(32))
    }

    /// The names of the cache files that start with `prefix`, listed without measuring them,
    /// after the directory passed its check.
    private func names(startingWith prefix: String = "") -> [String] {
        ((try? directory.files(startingWith: prefix, endingWith: ".cache", measuring: false)) ?? []).map(\.name)
    }

    /// The cache files with their sizes and times, after the directory passed its check; `nil`
    /// when the directory could not be listed.
    private func entries() -> [PrivateDirectory.ListedFile]? {
        try? directory.files(endingWith: ".cache", measuring: true)
    }

    /// When the counted bytes exceed the capacity, measures the directory and deletes the oldest
    /// files until it holds at most 7/8 of its capacity (called after ``set(_:for:)``, apart from
    /// it, so that a caller need not hold its own locks across the directory scan).
    func trim() {
        guard usage.total > capacity, var files = entries() else { return }
        usage.reset(to: files)
        var total = files.reduce(0) { $0 + $1.size }
        guard total > capacity else { return }
        files.sort { $0.modified < $1.modified }
        let target = capacity - capacity / 8
        var evicted: [String] = []
        for file in files where total > target {
            evicted.append(file.name)
            total -= file.size
        }
        remove(files: evicted)
    }

    private static func decode(_ data: Data) -> Record? {
        guard let newline = data.lastIndex(of: UInt8(ascii: "\n")) else { return nil }
        let json = data[data.startIndex..<newline]
        let checksum = data[data.index(after: newline)...]
        guard Array(checksum) == Array(Digest.hex(Digest.sha256(Array(json))).utf8) else { return nil }
        return try? JSONDecoder().decode(Record.self, from: json)
    }
}
