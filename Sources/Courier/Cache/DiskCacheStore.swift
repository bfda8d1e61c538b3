import CourierTLS
import Foundation

/// Cached responses in a directory: one file per URL, written atomically, checked on read.
///
/// Each file holds the JSON of the URL's variants followed by a line with the SHA-256 of that
/// JSON. A file whose checksum does not match — truncated by a crash, or corrupted — is deleted
/// and treated as a miss, never served. The directory is kept under its byte capacity by
/// deleting the least recently written files.
struct DiskCacheStore: Sendable {
    private struct Record: Codable {
        var key: String
        var variants: [CachedResponse]
    }

    let directory: URL
    let capacity: Int

    init(directory: URL, capacity: Int) {
        self.directory = directory
        self.capacity = capacity
        try? FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
    }

    func variants(for key: String) -> [CachedResponse]? {
        let file = path(for: key)
        guard let data = FileManager.default.contents(atPath: file) else { return nil }
        guard let record = Self.decode(data), record.key == key else {
            try? FileManager.default.removeItem(atPath: file)  // corrupt or truncated: drop it
            return nil
        }
        return record.variants
    }

    func set(_ variants: [CachedResponse], for key: String) {
        guard let json = try? JSONEncoder().encode(Record(key: key, variants: variants)), json.count <= capacity else { return }
        var data = json
        data.append(contentsOf: Array("\n".utf8) + Self.hex(Digest.sha256(json)))
        try? FileCredentialStore.writeAtomically(data, to: path(for: key), mode: 0o600)
        trim()
    }

    func remove(_ key: String) {
        try? FileManager.default.removeItem(atPath: path(for: key))
    }

    func removeAll() {
        for file in entries() { try? FileManager.default.removeItem(at: file.url) }
    }

    private func path(for key: String) -> String {
        directory.appendingPathComponent(String(decoding: Self.hex(Digest.sha256(Array(key.utf8))), as: UTF8.self) + ".cache").path
    }

    private func entries() -> [(url: URL, size: Int, date: Date)] {
        let keys: [URLResourceKey] = [.fileSizeKey, .contentModificationDateKey]
        let files = (try? FileManager.default.contentsOfDirectory(at: directory, includingPropertiesForKeys: keys)) ?? []
        return files.filter { $0.pathExtension == "cache" }.map { file in
            let values = try? file.resourceValues(forKeys: Set(keys))
            return (file, values?.fileSize ?? 0, values?.contentModificationDate ?? .distantPast)
        }
    }

    /// Deletes the oldest files until the directory fits its capacity.
    private func trim() {
        var files = entries()
        var total = files.reduce(0) { $0 + $1.size }
        guard total > capacity else { return }
        files.sort { $0.date < $1.date }
        for file in files where total > capacity {
            try? FileManager.default.removeItem(at: file.url)
            total -= file.size
        }
    }

    private static func decode(_ data: Data) -> Record? {
        guard let newline = data.lastIndex(of: UInt8(ascii: "\n")) else { return nil }
        let json = data[data.startIndex..<newline]
        let checksum = data[data.index(after: newline)...]
        guard Array(checksum) == hex(Digest.sha256(Array(json))) else { return nil }
        return try? JSONDecoder().decode(Record.self, from: json)
    }

    private static func hex(_ bytes: [UInt8]) -> [UInt8] {
        let digits = Array("0123456789abcdef".utf8)
        return bytes.flatMap { [digits[Int($0 >> 4)], digits[Int($0 & 0x0F)]] }
    }
}
