import Courier
import CourierTestSupport
import Foundation
import Testing

/// Runs the uploads of one ``UploadChaos`` conversation the way a user would (closures and a
/// delegate) and checks what every request owes whatever happened to it: exactly one terminal
/// callback, through its closures and through the delegate; a connection that still serves
/// `GET /echo`; nothing leaked (``LeakCheck``). Each upload's ``SourceLog`` hears when its request
/// ended, so that a read of its body source after that shows.
enum UploadChaosRun {
    /// Starts every upload at once on a connection to `baseURL` over `makeTransport`'s transport,
    /// cancels those whose plan says so, and waits for every request to end.
    /// - Returns: each upload's result, in order.
    static func run(_ uploads: [UploadChaos.Upload], baseURL: URL, port: Int, _ context: String,
                    makeTransport: (LeakCheck) -> any Transport) async throws -> [Result<HTTPResponse, HTTPConnectionError>] {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("courier-upload-chaos-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let requests = try uploads.map { upload in
            var file: URL?
            if upload.source == .file {
                file = directory.appendingPathComponent("u\(upload.index)")
                try upload.bytes.write(to: file!)
            }
            return try upload.request(file: file)
        }
        return try await withLeakCheck { leaks in
            leaks.watch(port: port)
            let connection = leaks.track(HTTPConnection(baseURL: baseURL, configuration: .init(timeout: .seconds(10), transport: makeTransport(leaks))))
            let recorder = leaks.track(EventRecorder())
            connection.delegate = recorder
            let results = Locked<[Int: [Result<HTTPResponse, HTTPConnectionError>]]>([:])
            var ids: [RequestID] = []
            for (index, (upload, request)) in zip(uploads, requests).enumerated() {
                let record: @Sendable (Result<HTTPResponse, HTTPConnectionError>) -> Void = { result in
                    upload.log.requestEnded()
                    results.withLock { $0[index, default: []].append(result) }
                }
                ids.append(connection.start(request, onDidStart: recorder.onDidStart, onSuccess: { response in
                    record(.success(response))
                    recorder.onSuccess(response)
                }, onError: { error in
                    record(.failure(error))
                    recorder.onError(error)
                }))
            }
            let clock = ContinuousClock()
            let started = clock.now
            for (upload, id) in zip(uploads, ids).sorted(by: { ($0.0.cancelAfter ?? .zero) < ($1.0.cancelAfter ?? .zero) }) {
                guard let after = upload.cancelAfter else { continue }
                try await clock.sleep(until: started + after)
                connection.cancel(id)
            }
            let count = uploads.count
            #expect(await eventually(timeout: .seconds(30)) { recorder.closureTerminalCount >= count && recorder.terminalCount >= count },
                    "not every upload ended: \(recorder.events); \(context)")
            try await Task.sleep(for: .milliseconds(100))  // a late second terminal callback would land here
            let delivered = results.withLock { $0 }
            for (index, id) in ids.enumerated() {
                let terminals = recorder.events.filter { $0.isTerminal && $0.requestID == id }.count
                #expect(delivered[index]?.count == 1 && terminals == 1,
                        "\(uploads[index]): \(delivered[index]?.count ?? 0) terminal closures, \(terminals) delegate callbacks; \(context)")
            }
            let followUp = try await connection.get("/echo")
            #expect(followUp.status.code == 200, "the connection no longer serves; \(context)")
            return try uploads.indices.map { index in try #require(delivered[index]?.first, "\(context)") }
        }
    }
}
