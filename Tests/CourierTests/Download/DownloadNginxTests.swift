@testable import Courier
import CourierTestSupport
import CourierTestServer
import Foundation
import Synchronization
import Testing

/// Downloads against nginx, an independent server with its own `Range`, `If-Range` and `ETag`.
@Suite("Downloads: resume against nginx", .enabled(if: Nginx.isInstalled, Nginx.skipReason))
struct DownloadNginxTests {
    static let size = 16 << 20

    /// Starts a download, cancels it once `threshold` bytes are in the file, and waits for its
    /// one terminal callback. - Returns: that callback, as text.
    static func cancelledDownload(_ connection: HTTPConnection, to destination: URL, threshold: Int64) async -> [String] {
        let terminals = Locked<[String]>([])
        let id = Locked<RequestID?>(nil)
        let cancelled = Atomic<Bool>(false)
        let options = DownloadOptions { written, _ in
            if written >= threshold, !cancelled.exchange(true, ordering: .relaxed), let id = id.withLock({ $0 }) {
                connection.cancel(id)
            }
        }
        id.withLock { $0 = connection.download(HTTPRequest(.get, "/file.bin"), to: destination, options: options,
                                               onSuccess: { _ in terminals.withLock { $0.append("success") } },
                                               onError: { error in terminals.withLock { $0.append("error \(error.kindName)") } }) }
        _ = await eventually { terminals.withLock { !$0.isEmpty } }
        try? await Task.sleep(for: .milliseconds(100))
        return terminals.withLock { $0 }
    }

    @Test("cancelled part-way, then resumed: nginx sends only the rest (206), and the file matches by SHA-256")
    func resume() async throws {
        let body = TestServer.rangedBody(count: Self.size)
        let nginx = try await Nginx.start(files: ["file.bin": body])
        defer { nginx.stop() }
        let folder = try DownloadTests.Folder()
        defer { folder.remove() }
        let destination = folder.file("file.bin")
        try await withLeakCheck { leaks throws in
            leaks.watch(port: nginx.port)
            let connection = leaks.track(HTTPConnection(baseURL: nginx.baseURL,
                                                        configuration: .init(timeout: .seconds(30), transport: leaks.transport(.native))))
            #expect(await Self.cancelledDownload(connection, to: destination, threshold: 2 << 20) == ["error cancelled"])
            let partial = folder.file(".file.bin.courier-partial")
            let partialSize = try FileManager.default.attributesOfItem(atPath: partial.path)[.size] as? Int ?? 0
            #expect(partialSize >= 2 << 20 && partialSize < Self.size, "partial: \(partialSize)")

            let result = try await connection.download(HTTPRequest(.get, "/file.bin"), to: destination,
                                                        options: DownloadOptions(resume: true, expectedSHA256: sha256Hex(body)))
            #expect(result.response.status.code == 206)
            #expect(result.resumedFrom == Int64(partialSize))
            #expect(result.sha256 == sha256Hex(body))
            #expect(try Data(contentsOf: destination) == body)
            let received = result.response.metrics?.bytesReceived ?? 0
            let rest = Int64(Self.size - partialSize)
            #expect(received >= rest && received < rest + 4096, "bytes on the wire: \(received) for the \(rest) missing")
            #expect(folder.names == ["file.bin"])
        }
    }

    @Test("the file changed on the server (new ETag): the resume gets a 200 and the new file whole")
    func changedFile() async throws {
        let body = TestServer.rangedBody(count: Self.size)
        let nginx = try await Nginx.start(files: ["file.bin": body])
        defer { nginx.stop() }
        let folder = try DownloadTests.Folder()
        defer { folder.remove() }
        let destination = folder.file("file.bin")
        try await withLeakCheck { leaks throws in
            leaks.watch(port: nginx.port)
            let connection = leaks.track(HTTPConnection(baseURL: nginx.baseURL,
                                                        configuration: .init(timeout: .seconds(30), transport: leaks.transport(.native))))
            #expect(await Self.cancelledDownload(connection, to: destination, threshold: 2 << 20) == ["error cancelled"])
            // A new version: other bytes, another modification time, so another ETag.
            let changed = Data(body.reversed())
            let served = nginx.directory.appendingPathComponent("html/file.bin")
            try changed.write(to: served)
            try FileManager.default.setAttributes([.modificationDate: Date(timeIntervalSinceNow: 3600)], ofItemAtPath: served.path)
            let result = try await connection.download(HTTPRequest(.get, "/file.bin"), to: destination,
                                                        options: DownloadOptions(resume: true, computesSHA256: true))
            #expect(result.response.status.code == 200)
            #expect(result.resumedFrom == 0)
            #expect(result.sha256 == sha256Hex(changed))
            #expect(try Data(contentsOf: destination) == changed)
        }
    }
}
