@testable import Courier
import CourierTestServer
import CourierTestSupport
import Foundation
import Testing

/// `HTTPConnection.stream` in seeded random conversations over real sockets: several bodies of
/// 0 to 6 MiB stream at once, and readers read fast, slowly, break off, cancel or drop theirs,
/// while the server sends all, cuts, drops or stalls (``StreamingChaos``). Every octet read must be
/// the body's; each reading ends as what the server and the reader did say; while a reader pauses,
/// what the client takes and what the server could send stay bounded; an abandoned body closes
/// its HTTP/1.1 connection, or resets only its own HTTP/2 stream; the connection serves a
/// follow-up request, each request has one terminal event, and nothing leaks.
@Suite("Streamed bodies in random conversations over real sockets")
struct StreamingChaosTests {
    /// What a body's buffer holds before the transport stops reading.
    static let buffered = 256 << 10
    /// One read past the buffer's room (HTTP/1.1), or one DATA frame (HTTP/2).
    static let oneRead = 16 << 10
    /// The HTTP/1.1 server's socket send buffer (the kernel doubles it).
    static let serverSendBuffer = 32 << 10
    /// The client's HTTP/2 stream window (SETTINGS_INITIAL_WINDOW_SIZE).
    static let streamWindow = 1 << 20

    @Test("HTTP/1.1, 12 random conversations of 5 downloads on pooled connections: every octet right, each ends as the server and reader say, a paused reader holds the server back, an abandoned body's connection closes, nothing leaks")
    func http1() async throws {
        let seed = SeededRandom.seed(default: 0x5EED_0005_0101)
        for conversation in 0..<12 {
            try await playHTTP1(seed: seed, conversation: conversation)
        }
    }

    @Test("HTTP/2, 12 random conversations of 5 downloads on one connection: every octet right, each ends as the server and reader say, a paused reader's stream window runs out, an abandoned body resets its own stream only, nothing leaks")
    func http2() async throws {
        let seed = SeededRandom.seed(default: 0x5EED_0005_0102)
        for conversation in 0..<12 {
            try await playHTTP2(seed: seed, conversation: conversation)
        }
    }

    private func plans(seed: UInt64, conversation: Int) -> [StreamingChaos.Download] {
        _ = StreamingChaos.pattern  // made once, here, not on the server's loop
        var random = SeededRandom(seed: seed, stream: conversation)
        return (0..<5).map { StreamingChaos.plan(&random, conversation: conversation, index: $0) }
    }

    private func playHTTP1(seed: UInt64, conversation: Int) async throws {
        let downloads = plans(seed: seed, conversation: conversation)
        let context = "HTTP/1.1 conversation \(conversation), \(SeededRandom(seed: seed).replayHint)"
        var serverConfiguration = TestServer.Configuration()
        serverConfiguration.sendBufferSize = Self.serverSendBuffer
        let server = try TestServer(configuration: serverConfiguration)
        defer { server.shutdown() }
        let route = StreamingChaosRoute(downloads, on: server)
        try await withLeakCheck { leaks throws in
            leaks.watch(server)
            let transport = leaks.native(.init(maxConnectionsPerHost: downloads.count))
            defer { transport.shutdown() }
            let (connection, log) = Self.connection(to: server.baseURL, transport, leaks)
            let readings = await Self.run(downloads, on: connection) { download, consumed in
                // Wait until the client holds more than half a buffer (it reads until the buffer is
                // full, then not again before it is half empty) or the server wrote all it will.
                let engaged = await eventually(timeout: .seconds(20)) {
                    log.taken(download.path) - consumed > Self.buffered / 2 || route.log(download.path).finished
                }
                try? await Task.sleep(for: .milliseconds(10))  // the reader holds still a little longer
                // What the server sent is what the client took plus what the sockets hold (the
                // client's receive buffer grows by itself as the kernel sees it read fast, up to
                // tcp_rmem's maximum, 32 MiB here, so it is measured, not assumed). The three are
                // read apart, so they add up only once the flow has stopped: two samples 20 ms
                // apart that agree. (While the transport still fills the reader's buffer, or a
                // server still writes, no such pair comes, and the sockets' share goes unchecked.)
                let sample = { (taken: log.taken(download.path), sent: route.log(download.path).sent,
                                queued: await TCPSocketTable.queuedBytes(port: server.port)) }
                var (taken, sent, queued) = await sample()
                var stable = false
                for _ in 0..<10 where !stable {
                    try? await Task.sleep(for: .milliseconds(20))
                    let next = await sample()
                    stable = next.taken == taken && next.sent == sent && next.queued == queued
                    (taken, sent, queued) = next
                }
                let history = "paused at \(consumed): the client took \(taken), the server sent \(sent), the sockets hold \(queued.map(String.init) ?? "?"); \(download); \(context)"
                #expect(engaged, "neither half a buffer nor the whole body: \(history)")
                #expect(taken - consumed <= Self.buffered + Self.oneRead, "\(history)")
                // A reset connection's unread octets are gone from the kernel: nothing to count them by.
                let reset = if case .drop(let at) = download.fault { sent >= at } else { false }
                if let queued, stable, !reset {
                    #expect(sent - consumed <= Self.buffered + Self.oneRead + queued, "\(history)")
                }
            }
            for (download, reading) in zip(downloads, readings) {
                StreamingChaos.check(reading, download, context)
            }
            // An abandoned body's connection closes; one whose body may all have come is kept: the
            // client may have read a full buffer past its reader, and one read more before the
            // abandonment reached the connection.
            let kept = zip(downloads, readings).count { download, reading in
                download.fault == .none && (reading.error == nil || download.reader.abandons)
                    && download.size - reading.received <= 2 * Self.buffered + Self.oneRead
            }
            #expect(await eventually(timeout: .seconds(20)) { server.connectionsOpen <= kept },
                    "\(server.connectionsOpen) connections open, \(kept) may be kept: \(zip(downloads, readings).map { "\($0) got \($1)" }); \(context)")
            try await Self.followUp(connection, log, downloads, context)
        }
    }

    private func playHTTP2(seed: UInt64, conversation: Int) async throws {
        let downloads = plans(seed: seed, conversation: conversation)
        let context = "HTTP/2 conversation \(conversation), \(SeededRandom(seed: seed).replayHint)"
        let server = StreamingChaosPeer(downloads)
        let peer = try HTTP2ScriptedPeer(script: server.script)
        defer { peer.close() }
        try await withLeakCheck { leaks throws in
            leaks.watch(port: peer.port)
            let configuration = NativeTransport.Configuration().speakingH2C()
            let transport = leaks.native(configuration)
            defer { transport.shutdown() }
            let (connection, log) = Self.connection(to: peer.baseURL, transport, leaks)
            let bound = Self.buffered + Self.streamWindow + Self.oneRead
            let readings = await Self.run(downloads, on: connection) { download, consumed in
                // Wait until the peer has used up the stream's window, or has nothing more to send.
                let engaged = await eventually(timeout: .seconds(20)) {
                    let state = server.log(download.path)
                    return state.waitingForWindow || state.ended || state.sent == download.fault.available(download.size)
                }
                try? await Task.sleep(for: .milliseconds(10))
                let state = server.log(download.path)
                let taken = log.taken(download.path)
                let history = "paused at \(consumed): the client took \(taken), the peer sent \(state.sent); \(download); \(context)"
                #expect(engaged, "the peer neither ran out of window nor sent the whole body: \(history)")
                #expect(taken - consumed <= bound && state.sent - consumed <= bound, "\(history)")
            }
            let dropped = downloads.contains { server.log($0.path).lost }
            for (download, reading) in zip(downloads, readings) {
                let state = server.log(download.path)
                StreamingChaos.check(reading, download, lost: dropped, replayed: state.visits > 1, "\(state); \(context)")
            }
            // Every stream ends for the peer; the client resets only those it gave up, with CANCEL.
            for (download, reading) in zip(downloads, readings) {
                #expect(await eventually(timeout: .seconds(20)) { server.log(download.path).ended || dropped },
                        "the stream never ended: \(download); \(context)")
                let state = server.log(download.path)
                let gaveUp = download.reader.abandons || reading.error == .timedOut
                #expect(state.clientReset == nil || (gaveUp && state.clientReset == .cancel),
                        "RST_STREAM \(String(describing: state.clientReset)): \(download); \(context)")
            }
            // One connection carries every stream, unless the peer dropped one.
            #expect(dropped ? peer.connectionsAccepted <= 3 : peer.connectionsAccepted == 1,
                    "\(peer.connectionsAccepted) connections; \(context)")
            try await Self.followUp(connection, log, downloads, context)
        }
    }

    /// A connection over `transport` with a ``DownloadLog`` as its delegate, both tracked.
    private static func connection(to url: URL, _ transport: NativeTransport, _ leaks: LeakCheck) -> (HTTPConnection, DownloadLog) {
        let connection = leaks.track(HTTPConnection(baseURL: url, configuration: .init(timeout: .seconds(10), transport: transport)))
        let log = leaks.track(DownloadLog())
        connection.delegate = log
        return (connection, log)
    }

    /// Streams every download at once, each read by its own task as its plan says.
    private static func run(_ downloads: [StreamingChaos.Download], on connection: HTTPConnection,
                            pause: @escaping @Sendable (StreamingChaos.Download, Int) async -> Void) async -> [StreamingChaos.Reading] {
        await withTaskGroup(of: (Int, StreamingChaos.Reading).self) { group in
            for download in downloads {
                group.addTask {
                    var request = HTTPRequest(.get, download.path)
                    request.timeout = download.timeout
                    let response: HTTPStreamingResponse
                    do throws(HTTPConnectionError) {
                        response = try await connection.stream(request)
                    } catch {
                        return (download.index, StreamingChaos.Reading(error: error))
                    }
                    if download.reader == .drop { return (download.index, StreamingChaos.Reading()) }
                    return (download.index, await StreamingChaos.read(response.body, download) { await pause(download, $0) })
                }
            }
            var readings = [StreamingChaos.Reading](repeating: .init(), count: downloads.count)
            for await (index, reading) in group { readings[index] = reading }
            return readings
        }
    }

    /// A request after the conversation succeeds, and every request had exactly one terminal event.
    private static func followUp(_ connection: HTTPConnection, _ log: DownloadLog, _ downloads: [StreamingChaos.Download],
                                 _ context: String) async throws {
        let next = try await connection.send(HTTPRequest(.get, "/echo"))
        #expect(next.status.code == 200, "\(context)")
        for download in downloads {
            #expect(await eventually(timeout: .seconds(20)) { !log.terminal(download.path).isEmpty }, "\(download); \(context)")
            #expect(log.terminal(download.path).count == 1, "\(log.terminal(download.path)): \(download); \(context)")
        }
    }
}
