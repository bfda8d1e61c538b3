import Foundation

/// The servers of a run: nginx for the static files (the bench server when nginx is missing),
/// and the bench server for the scenarios that need server logic.
final class Servers {
    /// nginx, if it is installed and started.
    let nginx: NginxServer?
    /// The bench server (CourierTestServer in a process of its own).
    let benchServer: BenchServerProcess
    /// The certificates nginx serves HTTPS with, when nginx and openssl are installed.
    let certificates: BenchCertificates?

    /// Starts both servers, serving `files` (and nginx the large-body files in `large`).
    /// - Throws: ``BenchError`` when the bench server, or an installed nginx, does not start.
    init(files: URL, folder: URL, large: LargeFiles) throws {
        if let executable = NginxServer.locate() {
            let nginxFolder = try BuildFolder.folder("bench-nginx")
            certificates = try BenchCertificates.locate().map { try BenchCertificates(openssl: $0, folder: nginxFolder) }
            nginx = try NginxServer(executable: executable, folder: nginxFolder, files: files, large: large.folder,
                                    certificates: certificates)
        } else {
            certificates = nil
            FileHandle.standardError.write(Data("courier-bench: nginx not found; CourierTestServer serves the static files instead\n".utf8))
            nginx = nil
        }
        do {
            benchServer = try BenchServerProcess(files: files, folder: folder)
        } catch {
            nginx?.stop()
            throw error
        }
    }

    /// The base URL and description of the server for `role`; `nil` for HTTPS (HTTP/2 included)
    /// without nginx or openssl.
    func server(for role: Scenario.Server) -> (URL, String)? {
        switch role {
        case .files: (nginx?.baseURL ?? benchServer.baseURL, filesDescription)
        case .logic: (benchServer.baseURL, logicDescription)
        case .tls: nginx.flatMap { nginx in nginx.tlsURL.map { ($0, "\(nginx.version), TLS 1.3, ECDSA P-256 certificate from a run-time CA, session tickets on, on \($0.absoluteString)") } }
        case .http2: nginx.flatMap { nginx in nginx.http2URL.map { ($0, "\(nginx.version), TLS 1.3 with ALPN h2 (`listen ssl http2`, `http2_max_concurrent_streams \(NginxServer.http2MaxConcurrentStreams)`), ECDSA P-256 certificate from a run-time CA, on \($0.absoluteString)") } }
        case .largeFiles: nginx.map { ($0.baseURL, "\($0.version) on \($0.baseURL.absoluteString) (one process, `sendfile on`; uploads stored by its WebDAV PUT); files in memory (/dev/shm) when there is room") }
        case .tlsFullHandshake: nginx.flatMap { nginx in nginx.fullHandshakeURL.map { ($0, "\(nginx.version), TLS 1.3, ECDSA P-256 certificate from a run-time CA, session tickets and cache off (every handshake is full), on \($0.absoluteString)") } }
        }
    }

    /// Who serves the static files, in words.
    var filesDescription: String {
        if let nginx { return "\(nginx.version) on \(nginx.baseURL.absoluteString) (one process)" }
        return "bench-server (CourierTestServer, its own process; nginx not found) on \(benchServer.baseURL.absoluteString)"
    }

    /// Who serves the logic scenarios, in words.
    var logicDescription: String {
        "bench-server (CourierTestServer, its own process, 2 event loops) on \(benchServer.baseURL.absoluteString)"
    }

    /// Stops both servers.
    func stop() {
        nginx?.stop()
        benchServer.stop()
    }
}
