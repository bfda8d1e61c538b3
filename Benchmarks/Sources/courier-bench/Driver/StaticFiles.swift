import Foundation

/// The files the static scenarios fetch, written once per run and served by nginx (or, without
/// nginx, by the bench server from the same folder).
enum StaticFiles {
    /// A ~100-byte JSON document, never cached (`Cache-Control: no-store`).
    static let small = "small.json"
    /// The same document, fresh for a day (`Cache-Control: max-age=86400`): the cache scenario.
    static let cached = "cached.json"
    /// 1 MiB of bytes.
    static let large = "1mib.bin"
    /// The POST endpoint's path; it answers `{"ok":true}`.
    static let post = "post"
    /// The POST endpoint's answer.
    static let postReply = #"{"ok":true}"#

    /// The small document's text: 100 bytes of JSON.
    static let smallJSON = #"{"id":42,"name":"Courier","tags":["http","swift","linux"],"active":true,"score":98.5,"owner":"bench"}"#

    /// Writes the files into `folder`.
    /// - Throws: when a file cannot be written.
    static func write(into folder: URL) throws {
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        try Data(smallJSON.utf8).write(to: folder.appendingPathComponent(small))
        try Data(smallJSON.utf8).write(to: folder.appendingPathComponent(cached))
        var bytes = Data(count: 1 << 20)
        bytes.withUnsafeMutableBytes { raw in
            for index in raw.indices { raw[index] = UInt8(truncatingIfNeeded: index &* 31) }
        }
        try bytes.write(to: folder.appendingPathComponent(large))
    }
}
