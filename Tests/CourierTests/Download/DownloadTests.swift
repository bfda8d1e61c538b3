@testable import Courier
import CourierTestSupport
import CourierTestServer
import Foundation
import Synchronization
import Testing

/// `HTTPConnection.download`: a streamed body into a file beside the destination, renamed
/// atomically at the end, resumed with `Range`/`If-Range`, checked by SHA-256 (issue 15, part 3).
@Suite("Downloads to a file")
struct DownloadTests {
    /// A fresh directory for one test's files, removed by ``remove()``.
    struct Folder {
        let url: URL
        init() throws {
            url = FileManager.default.temporaryDirectory.appendingPathComponent("courier-download-\(UUID().uuidString)")
            try FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
        }
        func file(_ name: String) -> URL { url.appendingPathComponent(name) }
        func remove() { try? FileManager.default.removeItem(at: url) }
        /// The names in the folder, sorted (hidden files included).
        var names: [String] { ((try? FileManager.default.contentsOfDirectory(atPath: url.path)) ?? []).sorted() }
    }

    /// A `/file` route over ``TestServer/rangedReply(_:body:etag:lastModified:cutAt:)`` that cuts the
    /// first answer at 50% and counts the body bytes of every answer.
    final class RangedFile: Sendable {
        let body: Data
        let etag = Mutex("\"v1\"")
        let cutFirst: Bool
        /// (status, body bytes sent, the request's Range and If-Range) of every answer.
        let answers = Mutex<[(status: Int, bytes: Int, range: String?, ifRange: String?)]>([])

        init(size: Int, cutFirst: Bool = true) {
            body = TestServer.rangedBody(count: size)
            self.cutFirst = cutFirst
        }

        func install(on server: TestServer, path: String = "/file") {
            server.route(path) { [self] request in
                let first = answers.withLock { $0.isEmpty }
                let ranged = TestServer.rangedReply(request, body: body, etag: etag.withLock { $0 },
                                                    lastModified: "Sun, 06 Nov 1994 08:49:37 GMT",
                                                    cutAt: cutFirst && first ? 0.5 : nil)
                answers.withLock {
                    $0.append((ranged.status, ranged.bodyBytes, request.value(for: "Range"), request.value(for: "If-Range")))
                }
                return ranged.reply
            }
        }

        var list: [(status: Int, bytes: Int, range: String?, ifRange: String?)] { answers.withLock { $0 } }
    }

    @Test("a download cut at 50% keeps its partial file; resumed, it fetches only the rest (206) and the file matches by SHA-256",
          arguments: TransportUnderTest.allCases)
    func cutAndResume(kind: TransportUnderTest) async throws {
        let server = try TestServer()
        defer { server.shutdown() }
        let folder = try Folder()
        defer { folder.remove() }
        let size = 8 << 20
        let file = RangedFile(size: size)
        file.install(on: server)
        let destination = folder.file("big.bin")
        try await withLeakCheck { leaks throws in
            let connection = leaks.connection(server, kind, timeout: .seconds(30))
            let first = await failure { () async throws(HTTPConnectionError) in
                _ = try await connection.download(HTTPRequest(.get, "/file"), to: destination)
            }
            #expect(first == .connectionLost, "got \(String(describing: first))")
            #expect(!FileManager.default.fileExists(atPath: destination.path), "the destination appears only when complete")
            #expect(folder.names == [".big.bin.courier-partial", ".big.bin.courier-partial.validator"])
            let partialSize = try FileManager.default.attributesOfItem(atPath: folder.file(".big.bin.courier-partial").path)[.size] as? Int ?? -1
            #expect(partialSize > 0 && partialSize <= size / 2, "the partial file holds what arrived: \(partialSize)")
            let mode = try FileManager.default.attributesOfItem(atPath: folder.file(".big.bin.courier-partial").path)[.posixPermissions] as? Int
            #expect(mode == 0o600)

            let progress = Locked<[Int64]>([])
            let options = DownloadOptions(resume: true, expectedSHA256: sha256Hex(file.body)) { written, total in
                #expect(total == Int64(size))
                progress.withLock { $0.append(written) }
            }
            let result = try await connection.download(HTTPRequest(.get, "/file"), to: destination, options: options)
            #expect(result.response.status.code == 206)
            #expect(result.resumedFrom == Int64(partialSize))
            #expect(result.byteCount == Int64(size))
            #expect(result.sha256 == sha256Hex(file.body))
            #expect(try Data(contentsOf: destination) == file.body)
            #expect(folder.names == ["big.bin"], "the partial file became the destination; the record is gone")
            let finalMode = try FileManager.default.attributesOfItem(atPath: destination.path)[.posixPermissions] as? Int
            #expect(finalMode == 0o644)

            let answers = file.list
            #expect(answers.count == 2)
            #expect(answers.last?.range == "bytes=\(partialSize)-")
            #expect(answers.last?.ifRange == "\"v1\"")
            #expect(answers.last?.bytes == size - partialSize, "the server sent only the rest")
            let received = result.response.metrics?.bytesReceived ?? 0
            #expect(received >= Int64(size - partialSize) && received < Int64(size - partialSize) + 4096,
                    "bytes on the wire for the resume: \(received)")
            #expect(await eventually { progress.withLock { $0.last } == Int64(size) })
            #expect(progress.withLock { $0.first ?? 0 } >= Int64(partialSize), "progress counts the resumed prefix")
            #expect(progress.withLock { $0.count } <= 102, "throttled to about one report per 1%")
        }
    }

    @Test("when the validator changed, the resume gets a 200 and downloads the whole new file")
    func validatorChanged() async throws {
        let server = try TestServer()
        defer { server.shutdown() }
        let folder = try Folder()
        defer { folder.remove() }
        let size = 2 << 20
        let file = RangedFile(size: size)
        file.install(on: server)
        let destination = folder.file("data.bin")
        try await withLeakCheck { leaks throws in
            let connection = leaks.connection(server, .native, timeout: .seconds(30))
            _ = await failure { () async throws(HTTPConnectionError) in
                _ = try await connection.download(HTTPRequest(.get, "/file"), to: destination)
            }
            file.etag.withLock { $0 = "\"v2\"" }
            let result = try await connection.download(HTTPRequest(.get, "/file"), to: destination,
                                                        options: DownloadOptions(resume: true))
            #expect(result.response.status.code == 200)
            #expect(result.resumedFrom == 0)
            #expect(try Data(contentsOf: destination) == file.body)
            #expect(file.list.last?.ifRange == "\"v1\"", "the resume asked with the old validator")
            #expect(file.list.last?.bytes == size)
            #expect(folder.names == ["data.bin"])
        }
    }

    @Test("without resume, a partial file is started over")
    func noResumeStartsOver() async throws {
        let server = try TestServer()
        defer { server.shutdown() }
        let folder = try Folder()
        defer { folder.remove() }
        let file = RangedFile(size: 1 << 20)
        file.install(on: server)
        let destination = folder.file("a.bin")
        try await withLeakCheck { leaks throws in
            let connection = leaks.connection(server, .native, timeout: .seconds(30))
            _ = await failure { () async throws(HTTPConnectionError) in
                _ = try await connection.download(HTTPRequest(.get, "/file"), to: destination)
            }
            let result = try await connection.download(HTTPRequest(.get, "/file"), to: destination)
            #expect(result.response.status.code == 200)
            #expect(file.list.last?.range == nil)
            #expect(try Data(contentsOf: destination) == file.body)
        }
    }

    @Test("the digest is computed only when asked for: none by default, the file's with computesSHA256", arguments: TransportUnderTest.allCases)
    func digestOnlyWhenAsked(transport: TransportUnderTest) async throws {
        let server = try TestServer()
        defer { server.shutdown() }
        let folder = try Folder()
        defer { folder.remove() }
        let file = RangedFile(size: 300_000, cutFirst: false)
        file.install(on: server)
        try await withLeakCheck { leaks throws in
            let connection = leaks.connection(server, transport, timeout: .seconds(30))
            let plain = try await connection.download(HTTPRequest(.get, "/file"), to: folder.file("plain.bin"))
            #expect(plain.sha256 == nil)
            #expect(plain.byteCount == 300_000)
            let hashed = try await connection.download(HTTPRequest(.get, "/file"), to: folder.file("hashed.bin"),
                                                       options: DownloadOptions(computesSHA256: true))
            #expect(hashed.sha256 == sha256Hex(file.body))
            #expect(try Data(contentsOf: folder.file("hashed.bin")) == file.body)
        }
    }

    @Test("a SHA-256 mismatch fails with checksumMismatch and deletes the file, also after a resume")
    func checksumMismatch() async throws {
        let server = try TestServer()
        defer { server.shutdown() }
        let folder = try Folder()
        defer { folder.remove() }
        let file = RangedFile(size: 1 << 20)
        file.install(on: server)
        let destination = folder.file("x.bin")
        try Data("old".utf8).write(to: destination)
        try await withLeakCheck { leaks throws in
            let connection = leaks.connection(server, .native, timeout: .seconds(30))
            _ = await failure { () async throws(HTTPConnectionError) in
                _ = try await connection.download(HTTPRequest(.get, "/file"), to: destination)
            }
            let wrong = String(repeating: "ab", count: 32)
            let error = await failure { () async throws(HTTPConnectionError) in
                _ = try await connection.download(HTTPRequest(.get, "/file"), to: destination,
                                                  options: DownloadOptions(resume: true, expectedSHA256: wrong))
            }
            #expect(error == .checksumMismatch, "got \(String(describing: error))")
            #expect(error?.description.contains(sha256Hex(file.body)) == true, "the error names the digest found")
            #expect(file.list.last?.status == 206, "it was the resumed download that was checked")
            #expect(folder.names == ["x.bin"], "the partial file and its record are gone")
            #expect(try Data(contentsOf: destination) == Data("old".utf8), "the old destination is untouched")

            let invalid = await failure { () async throws(HTTPConnectionError) in
                _ = try await connection.download(HTTPRequest(.get, "/file"), to: destination,
                                                  options: DownloadOptions(expectedSHA256: "abc"))
            }
            #expect(invalid == .invalidRequest)
        }
    }

    @Test("a 206 for another range than asked fails with rangeMismatch and keeps the partial file")
    func rangeMismatch() async throws {
        let server = try TestServer()
        defer { server.shutdown() }
        let folder = try Folder()
        defer { folder.remove() }
        let file = RangedFile(size: 1 << 20)
        file.install(on: server)
        let destination = folder.file("r.bin")
        try await withLeakCheck { leaks throws in
            let connection = leaks.connection(server, .native, timeout: .seconds(30))
            _ = await failure { () async throws(HTTPConnectionError) in
                _ = try await connection.download(HTTPRequest(.get, "/file"), to: destination)
            }
            let before = folder.names
            server.route("/file") { _ in
                .response(status: 206, headers: [("Content-Range", "bytes 0-9/1048576"), ("ETag", "\"v1\"")], body: Data(count: 10))
            }
            let error = await failure { () async throws(HTTPConnectionError) in
                _ = try await connection.download(HTTPRequest(.get, "/file"), to: destination, options: DownloadOptions(resume: true))
            }
            #expect(error == .rangeMismatch, "got \(String(describing: error))")
            #expect(folder.names == before, "the partial file and record stay for a later resume")

            server.route("/file") { _ in .response(status: 206, body: Data(count: 10)) }
            let fresh = await failure { () async throws(HTTPConnectionError) in
                _ = try await connection.download(HTTPRequest(.get, "/file"), to: folder.file("s.bin"))
            }
            #expect(fresh == .rangeMismatch, "a 206 to a download that asked for no range")
        }
    }

    @Test("a 416 to a resume fails as unacceptableStatus and deletes the partial file, so the next download starts over")
    func unsatisfiableRange() async throws {
        let server = try TestServer()
        defer { server.shutdown() }
        let folder = try Folder()
        defer { folder.remove() }
        let file = RangedFile(size: 1 << 20)
        file.install(on: server)
        let destination = folder.file("t.bin")
        try await withLeakCheck { leaks throws in
            let connection = leaks.connection(server, .native, timeout: .seconds(30))
            _ = await failure { () async throws(HTTPConnectionError) in
                _ = try await connection.download(HTTPRequest(.get, "/file"), to: destination)
            }
            server.route("/file") { _ in .response(status: 416, headers: [("Content-Range", "bytes */10")]) }
            let error = await failure { () async throws(HTTPConnectionError) in
                _ = try await connection.download(HTTPRequest(.get, "/file"), to: destination, options: DownloadOptions(resume: true))
            }
            #expect(error == .unacceptableStatus)
            #expect(error?.response?.status.code == 416)
            #expect(folder.names.isEmpty)
        }
    }

    /// Hears a download's events in the delegate style.
    final class DownloadLog: HTTPConnectionDelegate {
        let events = Mutex<[String]>([])
        let destination: URL
        init(destination: URL) { self.destination = destination }
        func connection(_ connection: HTTPConnection, request id: RequestID, didFinishWith response: HTTPResponse) {
            let present = FileManager.default.fileExists(atPath: destination.path)
            events.withLock { $0.append("finished \(response.status.code) file:\(present)") }
        }
        func connection(_ connection: HTTPConnection, request id: RequestID, didFailWith error: HTTPConnectionError) {
            events.withLock { $0.append("failed \(error.kindName)") }
        }
        func connection(_ connection: HTTPConnection, didCancel id: RequestID) {
            events.withLock { $0.append("cancelled") }
        }
        var list: [String] { events.withLock { $0 } }
    }

    @Test("cancelled mid-download (closure style): one terminal callback, the partial file left closed for a resume that completes it",
          arguments: TransportUnderTest.allCases)
    func cancelMidDownload(kind: TransportUnderTest) async throws {
        let server = try TestServer()
        defer { server.shutdown() }
        let folder = try Folder()
        defer { folder.remove() }
        let size = 32 << 20
        let file = RangedFile(size: size, cutFirst: false)
        file.install(on: server)
        let destination = folder.file("c.bin")
        try await withLeakCheck { leaks throws in
            let connection = leaks.connection(server, kind, timeout: .seconds(30))
            let log = leaks.track(DownloadLog(destination: destination))
            connection.delegate = log
            let terminals = Locked<[String]>([])
            let cancelled = Atomic<Bool>(false)
            let id = Locked<RequestID?>(nil)
            let options = DownloadOptions { written, _ in
                if written >= 1 << 20, !cancelled.exchange(true, ordering: .relaxed), let id = id.withLock({ $0 }) {
                    connection.cancel(id)
                }
            }
            id.withLock { $0 = connection.download(HTTPRequest(.get, "/file"), to: destination, options: options,
                                                   onSuccess: { _ in terminals.withLock { $0.append("success") } },
                                                   onError: { error in terminals.withLock { $0.append("error \(error.kindName)") } }) }
            #expect(await eventually { terminals.withLock { $0.count } == 1 })
            try await Task.sleep(for: .milliseconds(200))
            #expect(terminals.withLock { $0 } == ["error cancelled"])
            #expect(log.list == ["cancelled"])
            let partial = folder.file(".c.bin.courier-partial")
            let partialSize = try FileManager.default.attributesOfItem(atPath: partial.path)[.size] as? Int ?? 0
            #expect(partialSize >= 1 << 20 && partialSize < size)
            #expect(try Data(contentsOf: partial) == file.body.prefix(partialSize), "the partial bytes are the body's prefix")

            let result = try await connection.download(HTTPRequest(.get, "/file"), to: destination, options: DownloadOptions(resume: true, computesSHA256: true))
            #expect(result.resumedFrom == Int64(partialSize))
            #expect(result.sha256 == sha256Hex(file.body))
            #expect(await eventually { log.list == ["cancelled", "finished 206 file:true"] }, "the delegate hears the end after the file is in place")
            connection.delegate = nil
        }
    }

    @Test("a second download to the same destination while one runs fails with cannotWriteFile")
    func concurrentSameDestination() async throws {
        let server = try TestServer()
        defer { server.shutdown() }
        let folder = try Folder()
        defer { folder.remove() }
        let destination = folder.file("same.bin")
        server.route("/slow") { _ in
            .script([.send("HTTP/1.1 200 OK\r\nContent-Length: 100\r\n\r\n"), .send(String(repeating: "x", count: 10)), .pause(.seconds(3)),
                     .send(String(repeating: "y", count: 90))])
        }
        try await withLeakCheck { leaks throws in
            let connection = leaks.connection(server, .native, timeout: .seconds(30))
            async let first = connection.download(HTTPRequest(.get, "/slow"), to: destination)
            #expect(await eventually { FileManager.default.fileExists(atPath: folder.file(".same.bin.courier-partial").path) })
            let second = await failure { () async throws(HTTPConnectionError) in
                _ = try await connection.download(HTTPRequest(.get, "/slow"), to: destination)
            }
            #expect(second == .cannotWriteFile, "got \(String(describing: second))")
            let result = try await first
            #expect(result.byteCount == 100)
            #expect(try Data(contentsOf: destination) == Data(String(repeating: "x", count: 10).utf8) + Data(String(repeating: "y", count: 90).utf8))
        }
    }

    @Test("a partial file's lock held a moment longer by another open of it (as a child process started meanwhile holds it until it runs its program) is waited for: the download succeeds")
    func lockHeldBriefly() async throws {
        let server = try TestServer()
        defer { server.shutdown() }
        let folder = try Folder()
        defer { folder.remove() }
        let file = RangedFile(size: 64 << 10, cutFirst: false)
        file.install(on: server)
        let destination = folder.file("held.bin")
        // Another open file description of the partial file takes the lock, and lets it go 150 ms later.
        let holder = open(folder.file(".held.bin.courier-partial").path, O_RDWR | O_CREAT | O_CLOEXEC, 0o600)
        #expect(holder >= 0 && flock(holder, LOCK_EX | LOCK_NB) == 0)
        let release = Task {
            try? await Task.sleep(for: .milliseconds(150))
            close(holder)
        }
        try await withLeakCheck { leaks throws in
            let connection = leaks.connection(server, .native, timeout: .seconds(30))
            let result = try await connection.download(HTTPRequest(.get, "/file"), to: destination)
            #expect(result.byteCount == Int64(64 << 10))
            #expect(try Data(contentsOf: destination) == file.body)
        }
        await release.value
    }

    @Test("the closure style: onSuccess gets the result once the file is in place; progress ends at the size", arguments: TransportUnderTest.allCases)
    func closureStyle(kind: TransportUnderTest) async throws {
        let server = try TestServer()
        defer { server.shutdown() }
        let folder = try Folder()
        defer { folder.remove() }
        let destination = folder.file("closure.bin")
        let body = TestServer.rangedBody(count: 3 << 20)
        try await withLeakCheck { leaks throws in
            let connection = leaks.connection(server, kind, timeout: .seconds(30))
            let outcome = Locked<[String]>([])
            let progress = Locked<[Int64]>([])
            let options = DownloadOptions(expectedSHA256: sha256Hex(body).uppercased()) { written, _ in progress.withLock { $0.append(written) } }
            connection.download(HTTPRequest(.get, "/ranged/\(3 << 20)"), to: destination, options: options,
                                onSuccess: { result in
                                    let present = (try? Data(contentsOf: destination)) == body
                                    outcome.withLock { $0.append("success \(result.byteCount) \(result.fileURL.lastPathComponent) file:\(present)") }
                                },
                                onError: { error in outcome.withLock { $0.append("error \(error.kindName)") } })
            #expect(await eventually { !outcome.withLock { $0 }.isEmpty })
            try await Task.sleep(for: .milliseconds(100))
            #expect(outcome.withLock { $0 } == ["success \(3 << 20) closure.bin file:true"])
            #expect(progress.withLock { $0.last } == Int64(3 << 20))
        }
    }

    @Test("a response without a validator cannot be resumed: its partial file is started over, without Range")
    func noValidatorStartsOver() async throws {
        let server = try TestServer()
        defer { server.shutdown() }
        let folder = try Folder()
        defer { folder.remove() }
        let body = TestServer.rangedBody(count: 1 << 20)
        let ranges = Locked<[String?]>([])
        server.route("/bare") { request in
            let first = ranges.withLock { $0.isEmpty }
            ranges.withLock { $0.append(request.value(for: "Range")) }
            return TestServer.rangedReply(request, body: body, etag: nil, lastModified: nil, cutAt: first ? 0.5 : nil).reply
        }
        let destination = folder.file("bare.bin")
        try await withLeakCheck { leaks throws in
            let connection = leaks.connection(server, .native, timeout: .seconds(30))
            _ = await failure { () async throws(HTTPConnectionError) in
                _ = try await connection.download(HTTPRequest(.get, "/bare"), to: destination)
            }
            #expect(folder.names == [".bare.bin.courier-partial"], "no record: nothing to resume against")
            let result = try await connection.download(HTTPRequest(.get, "/bare"), to: destination, options: DownloadOptions(resume: true))
            #expect(result.resumedFrom == 0)
            #expect(ranges.withLock { $0 } == [nil, nil])
            #expect(try Data(contentsOf: destination) == body)
        }
    }
}
