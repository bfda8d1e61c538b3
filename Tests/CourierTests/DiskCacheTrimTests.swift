@testable import Courier
import Foundation
import Testing

/// The disk half of ``HTTPCache``: its byte capacity, and what an invalidation or a wipe leaves
/// on disk, checked by a second cache that opens the same directory (as the next run of a
/// program would).
@Suite("HTTP cache on disk: capacity, invalidation and wipe")
struct DiskCacheTrimTests {
    static func request(_ path: String) -> TransportRequest {
        TransportRequest(method: .get, url: URL(string: "http://disk.test\(path)")!)
    }

    static func entry(_ path: String, bodyBytes: Int = 200) -> CachedResponse {
        let request = request(path)
        let response = HTTPResponse(status: .ok, headers: ["Cache-Control": "max-age=600"],
                                    body: Data(repeating: UInt8(ascii: "x"), count: bodyBytes), url: request.url)
        return CachedResponse(response, request: request, requestTime: Date(), responseTime: Date())
    }

    /// A fresh directory for one test, and its removal.
    static func withDirectory(_ body: (URL) throws -> Void) throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("courier-disk-cache-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: directory) }
        try body(directory)
    }

    /// The bytes the cache's files take in `directory`.
    static func bytesOnDisk(_ directory: URL) throws -> Int {
        try FileManager.default.contentsOfDirectory(at: directory, includingPropertiesForKeys: [.fileSizeKey])
            .filter { $0.pathExtension == "cache" }
            .reduce(0) { $0 + (try $1.resourceValues(forKeys: [.fileSizeKey]).fileSize ?? 0) }
    }

    /// Whether a cache opened afresh on `directory` (memory empty) finds `path`.
    static func onDisk(_ path: String, in directory: URL) -> Bool {
        HTTPCache(directory: directory).lookup(request(path)) != nil
    }

    @Test("300 writes to a 64 KiB disk cache: it never holds more than 64 KiB, keeps the newest entries, and measures its directory only when a write takes it past the capacity (not after every write)")
    func capacity() throws {
        try Self.withDirectory { directory in
            let capacity = 64 << 10
            let cache = HTTPCache(memoryCapacity: 16 << 20, directory: directory, diskCapacity: capacity)
            #expect(cache.isPersistent)
            let writes = 300
            var most = 0
            for index in 0..<writes {
                cache.store(Self.entry("/item/\(index)"), for: Self.request("/item/\(index)"))
                most = max(most, try Self.bytesOnDisk(directory))
            }
            #expect(most <= capacity, "the directory held \(most) bytes, over its capacity of \(capacity)")
            #expect(most > capacity / 2, "the directory never filled: \(most) bytes")
            // One scan when the cache was made, then one each time the count passed the capacity:
            // each trim frees an eighth of it (8 KiB, a dozen entries of about 600 bytes).
            let scans = try #require(cache.diskScans)
            #expect(scans <= 1 + writes / 8, "\(scans) scans for \(writes) writes")
            #expect(Self.onDisk("/item/\(writes - 1)", in: directory), "the newest entry was evicted")
            #expect(!Self.onDisk("/item/0", in: directory), "the oldest entry was kept past the capacity")
        }
    }

    @Test("a cache made on a directory that is over its capacity trims it at its first write")
    func overCapacityAtStart() throws {
        try Self.withDirectory { directory in
            let filler = HTTPCache(memoryCapacity: 16 << 20, directory: directory, diskCapacity: 1 << 20)
            for index in 0..<100 { filler.store(Self.entry("/old/\(index)"), for: Self.request("/old/\(index)")) }
            let before = try Self.bytesOnDisk(directory)
            let capacity = 16 << 10
            #expect(before > capacity)
            let cache = HTTPCache(memoryCapacity: 16 << 20, directory: directory, diskCapacity: capacity)
            cache.store(Self.entry("/new"), for: Self.request("/new"))
            let after = try Self.bytesOnDisk(directory)
            #expect(after <= capacity, "\(after) bytes after the write, \(before) before")
            #expect(Self.onDisk("/new", in: directory))
        }
    }

    @Test("an invalidation removes the URL's entry from disk and leaves the others; a wipe removes them all")
    func invalidationAndWipe() throws {
        try Self.withDirectory { directory in
            let cache = HTTPCache(directory: directory)
            for path in ["/a", "/b", "/a/child", "/ab"] { cache.store(Self.entry(path), for: Self.request(path)) }
            cache.invalidate(Self.request("/a").url)
            #expect(!Self.onDisk("/a", in: directory))
            for path in ["/b", "/a/child", "/ab"] { #expect(Self.onDisk(path, in: directory), "\(path) was removed with /a") }
            cache.removeAll()
            for path in ["/b", "/a/child", "/ab"] { #expect(!Self.onDisk(path, in: directory), "\(path) survived the wipe") }
            let left = try Self.bytesOnDisk(directory)
            #expect(left == 0)
        }
    }

    @Test("a cache opened on a directory removes the temporary files of writes a crash cut short (older than 10 minutes), and keeps younger ones, other hidden files and its entries")
    func abandonedTemporaries() throws {
        try Self.withDirectory { directory in
            let cache = HTTPCache(directory: directory)
            cache.store(Self.entry("/kept"), for: Self.request("/kept"))
            let manager = FileManager.default
            let hourAgo = Date().addingTimeInterval(-3600)
            func plant(_ name: String, modified: Date?) throws {
                let url = directory.appendingPathComponent(name)
                try Data("partial".utf8).write(to: url)
                if let modified { try manager.setAttributes([.modificationDate: modified], ofItemAtPath: url.path) }
            }
            try plant(".abc-def.cache.tmp-4242-17", modified: hourAgo)
            try plant(".abc-def.cache.tmp-4242-18", modified: hourAgo)
            try plant(".abc-def.cache.tmp-\(getpid())-19", modified: nil)  // a write under way now
            try plant(".keep-me", modified: hourAgo)
            _ = HTTPCache(directory: directory)
            let names = Set(try manager.contentsOfDirectory(atPath: directory.path))
            #expect(!names.contains(".abc-def.cache.tmp-4242-17") && !names.contains(".abc-def.cache.tmp-4242-18"), "\(names)")
            #expect(names.contains(".abc-def.cache.tmp-\(getpid())-19") && names.contains(".keep-me"), "\(names)")
            #expect(Self.onDisk("/kept", in: directory))
        }
    }
}
