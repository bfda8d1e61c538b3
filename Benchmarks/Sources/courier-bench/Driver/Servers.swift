import Foundation

/// The servers of a run: nginx for the static files (the bench server when nginx is missing),
/// and the bench server for the scenarios that need server logic.
final class Servers {
    /// nginx, if it is installed and started.
    let nginx: NginxServer?
    /// The bench server (CourierTestServer in a process of its own).
    let benchServer: BenchServerProcess

    /// Starts both servers, serving `files`.
    /// - Throws: ``BenchError`` when the bench server, or an installed nginx, does not start.
    init(files: URL, folder: URL) throws {
        if let executable = NginxServer.locate() {
            nginx = try NginxServer(executable: executable, folder: try BuildFolder.folder("bench-nginx"), files: files)
        } else {
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

    /// The base URL and description of the server for `role`.
    func server(for role: Scenario.Server) -> (URL, String) {
        switch role {
        case .files: (nginx?.baseURL ?? benchServer.baseURL, filesDescription)
        case .logic: (benchServer.baseURL, logicDescription)
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
