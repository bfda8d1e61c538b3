import Courier
import CourierTestServer
import CourierTestSupport
import Foundation
import Synchronization
import Testing

/// A download that cannot start (its folder is missing, a bad expected digest, a destination
/// that is no file URL) sends nothing and ends as any request that fails before sending: the
/// delegate hears `didFailWith`, then `onError` or the `async` caller; with neither, the
/// failure is reported as unhandled.
@Suite("Downloads that cannot start")
struct DownloadStartFailureTests {
    static let missingFolder = FileManager.default.temporaryDirectory
        .appendingPathComponent("courier-missing-\(UUID().uuidString)").appendingPathComponent("file.bin")

    @Test("closures: a missing folder is cannotWriteFile through the delegate, then onError once; onDidStart is not called; nothing is sent",
          arguments: TransportUnderTest.allCases)
    func closuresMissingFolder(transport: TransportUnderTest) async throws {
        let server = try TestServer()
        defer { server.shutdown() }
        try await withLeakCheck { leaks throws in
            let connection = leaks.connection(server, transport)
            let recorder = leaks.track(EventRecorder())
            recorder.expect(queue: connection.callbackQueue)
            connection.delegate = recorder
            let id = connection.download(HTTPRequest(.get, "/echo"), to: Self.missingFolder,
                                         onDidStart: recorder.onDidStart,
                                         onSuccess: { _ in recorder.record(.closureSuccess(0)) },
                                         onError: recorder.onError)
            #expect(await eventually { recorder.closureTerminalCount == 1 })
            try await Task.sleep(for: .milliseconds(100))
            #expect(recorder.events.map(\.description) == ["fail \(id) cannotWriteFile", "onError cannotWriteFile"])
            #expect(recorder.callbacksOffQueue == 0)
            #expect(server.totalRequests == 0)
            #expect(connection.activeRequestIDs.isEmpty)
        }
    }

    @Test("closures: a bad expected digest, or a destination that is no file URL, is invalidRequest, heard by the delegate too")
    func closuresInvalidRequest() async throws {
        let server = try TestServer()
        defer { server.shutdown() }
        try await withLeakCheck { leaks throws in
            let connection = leaks.connection(server, .native)
            let recorder = leaks.track(EventRecorder())
            connection.delegate = recorder
            let folder = try DownloadTests.Folder()
            defer { folder.remove() }
            let badDigest = connection.download(HTTPRequest(.get, "/echo"), to: folder.file("a.bin"),
                                                options: DownloadOptions(expectedSHA256: "not-hex"),
                                                onSuccess: { _ in }, onError: recorder.onError)
            let notAFile = connection.download(HTTPRequest(.get, "/echo"), to: URL(string: "https://example.com/a.bin")!,
                                               onSuccess: { _ in }, onError: recorder.onError)
            #expect(await eventually { recorder.closureTerminalCount == 2 })
            let failures = recorder.events.map(\.description)
            #expect(failures.contains("fail \(badDigest) invalidRequest"))
            #expect(failures.contains("fail \(notAFile) invalidRequest"))
            #expect(failures.filter { $0 == "onError invalidRequest" }.count == 2)
            #expect(server.totalRequests == 0)
            #expect(folder.names.isEmpty, "no partial file")
        }
    }

    @Test("closures without onError and without a delegate: the failure reaches the event monitor as unhandled")
    func unhandled() async throws {
        let server = try TestServer()
        defer { server.shutdown() }
        try await withLeakCheck { leaks throws in
            let events = Mutex<[EventMonitor.Event]>([])
            let connection = leaks.connection(server, .native) { configuration in
                configuration.eventMonitor = EventMonitor { event in events.withLock { $0.append(event) } }
            }
            let lost = connection.download(HTTPRequest(.get, "/echo"), to: Self.missingFolder,
                                           onSuccess: { _ in Issue.record("a download into a missing folder succeeded") })
            #expect(await eventually { events.withLock { $0.contains { if case .unhandledFailure(lost, _) = $0 { true } else { false } } } })
            #expect(server.totalRequests == 0)
        }
    }

    @Test("async: a missing folder throws cannotWriteFile at once, the delegate hears it, nothing is sent",
          arguments: TransportUnderTest.allCases)
    func asyncMissingFolder(transport: TransportUnderTest) async throws {
        let server = try TestServer()
        defer { server.shutdown() }
        try await withLeakCheck { leaks throws in
            let connection = leaks.connection(server, transport)
            let recorder = leaks.track(EventRecorder())
            connection.delegate = recorder
            await #expect(throws: HTTPConnectionError.cannotWriteFile) {
                _ = try await connection.download(HTTPRequest(.get, "/echo"), to: Self.missingFolder)
            }
            #expect(await eventually { recorder.terminalCount == 1 })
            #expect(recorder.events.map(\.description).allSatisfy { $0.hasPrefix("fail ") && $0.hasSuffix(" cannotWriteFile") })
            #expect(server.totalRequests == 0)
        }
    }
}
