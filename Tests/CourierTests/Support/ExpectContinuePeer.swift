import CourierTestServer
import CourierTestSupport
import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// A raw HTTP/1.1 server for `Expect: 100-continue`, on 127.0.0.1 (port 0), a thread per
/// connection. By path:
/// - `/continue`: answers `100 Continue` to a request that expects it, reads the body, answers
///   `200` with the number of body octets;
/// - `/silent`: never answers `100 Continue`; reads the body, answers `200` likewise;
/// - `/swallow`: never answers `100 Continue`; reads the body and never answers (until the
///   client closes);
/// - `/continue-then-refuse`: writes `100 Continue` and a `413` in one `send`, then reads what
///   comes until the client closes;
/// - `/no-expectations`: answers `417 Expectation Failed` to a request that expects `100 Continue`
///   (among other expectations, too),
///   at once, and closes; reads any other request's body and answers `200` with its octet count;
/// - `/late-417`: never answers `100 Continue`; reads the body, then answers a request that
///   expected it with `417 Expectation Failed` and any other with `200` and its octet count;
/// - `/redirect`: reads the body, answers `307` to `/no-expectations`;
/// - `/reject`: answers `401` as soon as the head arrived, then counts the body octets that still
///   come, until the body ends (then it serves the connection on), the client closes, or 2 s
///   pass without any (libcurl keeps such a connection open: then it closes it itself).
///
/// It logs each request (``Visit``): whether it expected `100 Continue`, how many body octets
/// arrived, and how long after the head the first of them came.
final class ExpectContinuePeer: Sendable {
    /// One request the server saw.
    struct Visit: Sendable {
        let path: String
        let expectsContinue: Bool
        /// The request's `Expect` field, as it came.
        var expect: String?
        var bodyOctets = 0
        /// Seconds from the head to the first body octet; `nil` when none came.
        var firstOctetAfter: Double?
    }

    private let log: Locked<[Visit]>
    private let listener: ThreadedListener

    init() throws {
        let log = Locked<[Visit]>([])
        self.log = log
        listener = try ThreadedListener { descriptor, _ in Self.serve(descriptor, log: log) }
    }

    /// The port it listens on.
    var port: Int { listener.port }

    /// `http://127.0.0.1:<port>`.
    var baseURL: URL { URL(string: "http://127.0.0.1:\(port)")! }

    /// Every request seen, in order.
    var visits: [Visit] { log.withLock { $0 } }

    /// Stops accepting and shuts every connection down.
    func close() {
        listener.close()
    }

    private static func serve(_ fd: Int32, log: Locked<[Visit]>) {
        var reader = PeerReader(fd: fd)
        while let head = reader.head() {
            let start = Date()
            var visit = Visit(path: head.path, expectsContinue: head.expectsContinue, expect: head.value("expect"))
            var framing = PeerBodyFraming(head)
            var body = Data()
            if head.path == "/reject" {
                send(fd, "HTTP/1.1 401 Unauthorized\r\nContent-Length: 0\r\n\r\n")
                // What still arrives is body the client should have held back: read until the
                // body ends (the connection then serves on), the client closes, or 2 s of silence.
                var poller = pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
                let arrives = reader.hasBuffered || poll(&poller, 1, 2_000) > 0
                let ended = arrives && framing.read(&reader, upTo: 1, into: &body)
                if !body.isEmpty { visit.firstOctetAfter = Date().timeIntervalSince(start) }
                let complete = ended && framing.read(&reader, upTo: .max, into: &body) && framing.done
                visit.bodyOctets = body.count
                log.withLock { $0.append(visit) }
                if complete { continue }
                return
            }
            if head.path == "/no-expectations", head.value("expect")?.lowercased().contains("100-continue") == true {
                // Logged before the answer, so that it comes before the repeat's visit.
                log.withLock { $0.append(visit) }
                send(fd, "HTTP/1.1 417 Expectation Failed\r\nContent-Length: 0\r\nConnection: close\r\n\r\n")
                return
            }
            if head.path == "/continue-then-refuse" {
                send(fd, "HTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 413 Content Too Large\r\nContent-Length: 0\r\nConnection: close\r\n\r\n")
                _ = framing.read(&reader, upTo: .max, into: &body)
                visit.bodyOctets = body.count
                log.withLock { $0.append(visit) }
                return
            }
            if head.path == "/continue", head.expectsContinue { send(fd, "HTTP/1.1 100 Continue\r\n\r\n") }
            var first = true
            while !framing.done {
                guard framing.read(&reader, upTo: body.count + 1, into: &body) else { break }
                if first, !body.isEmpty {
                    first = false
                    visit.firstOctetAfter = Date().timeIntervalSince(start)
                }
                guard framing.read(&reader, upTo: .max, into: &body) else { break }
            }
            visit.bodyOctets = body.count
            log.withLock { $0.append(visit) }
            guard framing.done else { return }
            if head.path == "/swallow" {
                _ = reader.take(max: 1)  // until the client gives up and closes
                return
            }
            if head.path == "/redirect" {
                send(fd, "HTTP/1.1 307 Temporary Redirect\r\nLocation: /no-expectations\r\nContent-Length: 0\r\n\r\n")
                continue
            }
            if head.path == "/late-417", head.expectsContinue {
                send(fd, "HTTP/1.1 417 Expectation Failed\r\nContent-Length: 0\r\n\r\n")
                continue
            }
            let answer = "\(body.count)"
            send(fd, "HTTP/1.1 200 OK\r\nContent-Length: \(answer.utf8.count)\r\n\r\n\(answer)")
        }
    }

    private static func send(_ fd: Int32, _ text: String) {
        ThreadedListener.send(fd, Data(text.utf8))
    }
}
