import CourierHTTP2
import Courier
import CourierTestServer
import Foundation
import Testing

/// An HTTP/2 server that refuses a stream unprocessed (REFUSED_STREAM, or GOAWAY below it) asks
/// for the request again: a body that can be sent again goes out on a new stream; a body stream
/// already read ends with bodyNotReplayable at once, without a second stream that would carry
/// only its HEADERS.
@Suite("Uploads: HTTP/2 streams refused unprocessed")
struct UploadRefusedStreamTests {
    @Test("REFUSED_STREAM and GOAWAY: a data body is sent again; a read stream ends with bodyNotReplayable and opens no second stream",
          arguments: [false, true])
    func refused(byGoAway: Bool) async throws {
        let opened = Locked<[String]>([])
        let (outcomes, _) = try await runHTTP2Case([
            HTTPRequest(.post, "/data", body: .data(Data(count: 50_000))),
            HTTPRequest(.post, "/stream", body: .stream(PatternChunks(total: 50_000, chunk: 10_000))),
        ]) { _, connection in
            try connection.start()
            while let frame = try connection.nextFrame() {
                switch frame {
                case .headers(let id, let block, _, _, _, _):
                    let path = connection.decodeFields(block).first { $0.name == ":path" }?.value ?? ""
                    let first = opened.withLock { paths in
                        paths.append(path)
                        return paths.count { $0 == path } == 1
                    }
                    if path == "/echo" || !first {
                        connection.respond(id, body: Array("\(path) again".utf8))
                    } else if byGoAway {
                        connection.send(.goAway(lastStreamID: 0, code: .noError, debugData: []))
                    } else {
                        connection.send(.rstStream(streamID: id, code: .refusedStream))
                    }
                case .data(let id, let data, let end, _) where !data.isEmpty:
                    connection.send(.windowUpdate(streamID: 0, increment: UInt32(data.count)))
                    if !end { connection.send(.windowUpdate(streamID: id, increment: UInt32(data.count))) }
                case .settings:
                    connection.send(.settingsAck)
                default:
                    continue
                }
            }
        }
        #expect(outcomes[0].response?.text == "/data again", "\(outcomes[0].result)")
        #expect(outcomes[1].error == .bodyNotReplayable, "\(outcomes[1].result)")
        let paths = opened.withLock { $0 }
        #expect(paths.count { $0 == "/data" } == 2 && paths.count { $0 == "/stream" } == 1, "streams opened: \(paths)")
    }
}
