import CourierTLS
import Foundation

/// Cached responses in a directory: one file per URL and partition, written atomically, checked on read.
///
/// The directory is a ``PrivateDirectory``: created with mode 0700, files mode 0600, and a
/// directory owned by another user or writable by group or others is refused (the store is not
/// made, so the cache stays in memory), so no other local user can plant or read entries.
/// Each file holds the JSON of the URL's variants followed by a line with the SHA-256 of that
/// JSON. A file whose checksum does not match — truncated by a crash, or corrupted — is deleted
/// and treated as a miss, never served. The directory is kept under its byte capacity by
/// deleting the least recently written files.
struct DiskCacheStore: Sendable {
    private struct Record: Codable {
        var key: String
        var variants: [CachedResponse]
    }

    let directory: PrivateDirectory
    let capacity: Int

    /// A store in `directory`, created (mode 0700) when missing; `nil` when the directory is refused.
    init?(directory url: URL, capacity: Int) {
        directory = PrivateDirectory(url: url)
        self.capacity = capacity
        do { try directory.prepare() } catch { return nil }
    }

    func variants(for key: String) -> [CachedResponse]? {
        let name = fileName(for: key)
        guard let data = try? directory.contents(of: name) else { return nil }
        guard let record = Self.decode(data), record.key == key else {
            try? directory.remove(name)  // corrupt or truncated: drop it
            return nil
        }
        return record.variants
    }

    func set(_ variants: [CachedResponse], for key: String) {
        guard let json = try? JSONEncoder().encode(Record(key: key, variants: variants)), json.count <= capacity else { return }
        var data = json
        data.append(contentsOf: Array("\n".utf8) + Array(Digest.hex(Digest.sha256(json)).utf8))
        try? directory.write(data, to: fileName(for: key))
    }

    func remove(_ key: String) {
        try? directory.remove(fileName(for: key))
    }

    func removeAll() {
        for file in entries() { try? directory.remove(file.url.lastPathComponent) }
    }

    /// Removes the entries of one URL (the key's part before any partition), in every partition.
    func removeAll(ofURL url: String) {
        let prefix = Self.urlPart(url) + "-"
        for file in entries() where file.url.lastPathComponent.hasPrefix(prefix) {
            try? directory.remove(file.url.lastPathComponent)
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

    /// The cache files, read only after the directory passed its check again.
    private func entries() -> [(url: URL, size: Int, date: Date)] {
        guard (try? directory.prepare()) != nil else { return [] }
        let keys: [URLResourceKey] = [.fileSizeKey, .contentModificationDateKey]
        let files = (try? FileManager.default.contentsOfDirectory(at: directory.url, includingPropertiesForKeys: keys)) ?? []
        return files.filter { $0.pathExtension == "cache" }.map { file in
            let values = try? file.resourceValues(forKeys: Set(keys))
            return (file, values?.fileSize ?? 0, values?.contentModificationDate ?? .distantPast)
        }
    }

    /// Deletes the oldest files until the directory fits its capacity (called after ``set(_:for:)``,
    /// apart from it, so that a caller need not hold its own locks across the directory scan).
    func trim() {
        var files = entries()
        var total = files.reduce(0) { $0 + $1.size }
        guard total > capacity else { return }
        files.sort { $0.date < $1.date }
        for file in files where total > capacity {
            try? directory.remove(file.url.lastPathComponent)
            total -= file.size
        }
    }

    private static func decode(_ data: Data) -> Record? {
        guard let newline = data.lastIndex(of: UInt8(ascii: "\n")) else { return nil }
        let json = data[data.startIndex..<newline]
        let checksum = data[data.index(after: newline)...]
        guard Array(checksum) == Array(Digest.hex(Digest.sha256(Array(json))).utf8) else { return nil }
        return try? JSONDecoder().decode(Record.self, from: json)
    }
}
