import Courier
import CourierTestSupport
import Foundation
import Testing

/// Runs the uploads of one ``UploadChaos`` conversation as a reliability case
/// (``runCase(_:on:_:timeout:configure:prepare:during:ended:sourceLocation:)``: one terminal
/// callback each, a connection that still serves `GET /echo`, nothing leaked), cancelling those
/// whose plan says so. Each upload's ``SourceLog`` hears when its request ended, so that a read of
/// its body source after that shows.
enum UploadChaosRun {
    /// Starts every upload at once on a connection to `server`: over a native transport made with
    /// `native`, or over `URLSessionTransport` when it is `nil`.
    /// - Returns: each upload's result, in order.
    static func run(_ uploads: [UploadChaos.Upload], on server: some CaseServer,
                    native: NativeTransport.Configuration?) async throws -> [Result<HTTPResponse, HTTPConnectionError>] {
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
        let cancel: (HTTPConnection, [RequestID]) async throws -> Void = { connection, ids in
            let clock = ContinuousClock()
            let started = clock.now
            for (upload, id) in zip(uploads, ids).sorted(by: { ($0.0.cancelAfter ?? .zero) < ($1.0.cancelAfter ?? .zero) }) {
                guard let after = upload.cancelAfter else { continue }
                try await clock.sleep(until: started + after)
                connection.cancel(id)
            }
        }
        let ended: @Sendable (Int) -> Void = { uploads[$0].log.requestEnded() }
        let outcomes = if let native {
            try await runNativeCase(requests, on: server, configuration: native, during: cancel, ended: ended)
        } else {
            try await runCase(.urlSession, on: server, requests, during: { try await cancel($0.connection, $1) }, ended: ended)
        }
        return outcomes.map(\.result)
    }
}

extension UploadChaosHTTP1Peer: CaseServer {}
