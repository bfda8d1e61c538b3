import Courier
import CourierTestServer
import Foundation
import Synchronization
import Testing

/// The seeded random streamed downloads of ``StreamingChaosTests``: what the server does with
/// each body, how its reader consumes it, the bodies' bytes, and the reader itself.
enum StreamingChaos {
    /// What the server does with a body.
    enum ServerFault: Sendable, Equatable, CustomStringConvertible {
        /// Sends all of it.
        case none
        /// Sends `at` octets, then cuts: HTTP/1.1 closes (FIN); HTTP/2 sends RST_STREAM.
        case cut(at: Int)
        /// Sends `at` octets, then drops: HTTP/1.1 resets (RST); HTTP/2 closes the connection.
        case drop(at: Int)
        /// Sends `at` octets, then nothing more (the request's short timeout ends it).
        case stall(at: Int)

        /// The octets the server sends of a body of `size`.
        func available(_ size: Int) -> Int {
            switch self {
            case .none: size
            case .cut(let at), .drop(let at), .stall(let at): at
            }
        }

        /// The error a reader that meets the fault must see.
        var expectedError: HTTPConnectionError? {
            switch self {
            case .none: nil
            case .cut, .drop: .connectionLost
            case .stall: .timedOut
            }
        }

        var description: String {
            switch self {
            case .none: "sends all"
            case .cut(let at): "cuts after \(at)"
            case .drop(let at): "drops after \(at)"
            case .stall(let at): "stalls after \(at)"
            }
        }
    }

    /// How a reader consumes its body.
    enum ReaderPlan: Sendable, Equatable {
        /// Reads every chunk at once.
        case fast
        /// Stops at each offset (its bytes so far, in order) while the test looks at backpressure.
        case slow(pauses: [Int])
        /// Breaks out of the loop once it has `at` octets.
        case breakAt(Int)
        /// Cancels its own task once it has `at` octets, then asks for the next chunk.
        case cancelAt(Int)
        /// Drops the response without reading its body.
        case drop

        /// Whether the reader gives up the body on purpose before its end.
        var abandons: Bool {
            switch self {
            case .fast, .slow: false
            case .breakAt, .cancelAt, .drop: true
            }
        }
    }

    /// One streamed download of a conversation.
    struct Download: Sendable, CustomStringConvertible {
        let index: Int
        let path: String
        let size: Int
        /// HTTP/1.1: `Transfer-Encoding: chunked` rather than `Content-Length`.
        let chunked: Bool
        let fault: ServerFault
        let reader: ReaderPlan
        /// The request's timeout: short for a stalled body, so that the test stays fast.
        var timeout: Duration { if case .stall = fault { .seconds(1) } else { .seconds(10) } }

        var description: String {
            "\(path): \(size) octets\(chunked ? " chunked" : ""), the server \(fault), the reader \(reader)"
        }
    }

    /// The largest body.
    static let maxSize = 6 << 20

    /// Plans download `index` of a conversation at random.
    static func plan(_ random: inout SeededRandom, conversation: Int, index: Int) -> Download {
        func below(_ bound: Int) -> Int { bound <= 0 ? 0 : Int(random.next() % UInt64(bound)) }
        let size = switch below(10) {
        case 0: 0
        case 1, 2: below(64 << 10)
        case 3, 4, 5: below(1 << 20)
        default: (3 << 19) + below(maxSize - (3 << 19))
        }
        let at = below(size)
        let fault: ServerFault = switch size == 0 ? 0 : below(20) {
        case 0..<10: .none
        case 10..<14: .cut(at: at)
        case 14..<17: .drop(at: at)
        default: .stall(at: at)
        }
        let reader: ReaderPlan = switch below(20) {
        case 0..<4: .fast
        case 4..<11: .slow(pauses: [below(min(size, 512 << 10)), below(size)].sorted())
        case 11..<14: .breakAt(1 + below(size))
        case 14..<17: .cancelAt(1 + below(size))
        default: .drop
        }
        return Download(index: index, path: "/stream/c\(conversation)/d\(index)", size: size,
                        chunked: below(2) == 0, fault: fault, reader: reader)
    }

    /// 8 MiB of the pattern every body is cut from; no two offsets 256 apart hold the same octet.
    static let pattern: [UInt8] = (0..<(8 << 20)).map { UInt8(truncatingIfNeeded: $0 &+ ($0 >> 8) &* 13 &+ ($0 >> 16) &* 101) }

    /// Where body `index` begins in ``pattern``.
    private static func origin(_ index: Int) -> Int { (index &* 7919) % ((8 << 20) - maxSize) }

    /// Octets `range` of body `index`.
    static func bytes(_ index: Int, _ range: Range<Int>) -> ArraySlice<UInt8> {
        pattern[(origin(index) + range.lowerBound)..<(origin(index) + range.upperBound)]
    }

    /// Whether `chunk` is exactly body `index` from `offset` on.
    static func matches(_ chunk: Data, body index: Int, at offset: Int) -> Bool {
        guard offset + chunk.count <= maxSize else { return false }
        let expected = bytes(index, offset..<(offset + chunk.count))
        return chunk.withUnsafeBytes { got in
            expected.withUnsafeBytes { memcmp(got.baseAddress!, $0.baseAddress!, chunk.count) == 0 }
        }
    }

    /// What a reader got.
    struct Reading: Sendable {
        var received = 0
        /// The first chunk that was not the body's next octets.
        var wrong: String?
        /// The error that ended the reading.
        var error: HTTPConnectionError?
        /// The reader broke off or cancelled on purpose.
        var stopped = false
        /// Something the body gave after its end or its error.
        var afterEnd: String?
    }

    /// Reads `body` as `download.reader` says, checking every chunk; calls `pause` with the
    /// octets read so far at each of a slow reader's pauses.
    static func read(_ body: HTTPBodyStream, _ download: Download, pause: (Int) async -> Void) async -> Reading {
        var reading = Reading()
        var pauses: [Int] = if case .slow(let offsets) = download.reader { offsets } else { [] }
        var iterator = body.makeAsyncIterator()
        do throws(HTTPConnectionError) {
            while true {
                while let next = pauses.first, reading.received >= next {
                    pauses.removeFirst()
                    await pause(reading.received)
                }
                guard let chunk = try await iterator.next() else { break }
                if reading.wrong == nil, !matches(chunk, body: download.index, at: reading.received) {
                    reading.wrong = "\(chunk.count) octets at \(reading.received) are not the body's"
                }
                reading.received += chunk.count
                switch download.reader {
                case .breakAt(let at) where reading.received >= at:
                    reading.stopped = true
                    return reading
                case .cancelAt(let at) where reading.received >= at:
                    reading.stopped = true
                    withUnsafeCurrentTask { $0?.cancel() }
                default:
                    continue
                }
            }
        } catch {
            reading.error = error
        }
        // The end, or the error, is final: nothing more comes.
        do throws(HTTPConnectionError) {
            if let more = try await iterator.next() { reading.afterEnd = "\(more.count) octets" }
        } catch where reading.error == nil {
            reading.afterEnd = "\(error) after the end"
        } catch {}
        return reading
    }

    /// Checks what a reader got against what the server did; `lost` when its HTTP/2 connection was
    /// dropped under it by a neighbour, `replayed` when the server answered it more than once.
    static func check(_ reading: Reading, _ download: Download, lost: Bool = false, replayed: Bool = false, _ context: String) {
        let history = "\(download): the reader got \(reading.received), \(reading.error.map { "\($0)" } ?? "no error")\(reading.stopped ? ", stopped" : ""); \(context)"
        let available = download.fault.available(download.size)
        #expect(reading.wrong == nil, "\(reading.wrong ?? ""): \(history)")
        #expect(reading.afterEnd == nil, "\(reading.afterEnd ?? "") came after the end: \(history)")
        switch download.reader {
        case .drop:
            return
        case .breakAt(let at) where reading.stopped:
            #expect(reading.received >= at && reading.received <= download.size && reading.error == nil, "\(history)")
            return
        case .cancelAt(let at) where reading.stopped:
            #expect(reading.received >= at && reading.received <= download.size && reading.error == .cancelled, "\(history)")
            return
        default:
            break
        }
        guard let error = reading.error else {
            #expect(reading.received == download.size && (download.fault == .none || replayed), "\(history)")
            return
        }
        #expect(reading.received < download.size, "an error after the whole body: \(history)")
        if lost, error == .connectionLost { return }
        #expect(error == download.fault.expectedError || (replayed && error == .connectionLost), "\(history)")
        switch download.fault {
        case .cut, .stall: #expect(reading.received == available || replayed, "\(history)")
        case .drop, .none: #expect(reading.received <= available || replayed, "\(history)")
        }
    }
}

/// What the client took of each download, as an `HTTPConnectionDelegate` hears it: the octets the
/// transport read for it, and its terminal events.
final class DownloadLog: HTTPConnectionDelegate {
    private struct Entry {
        var taken = 0
        var terminal: [String] = []
    }

    private let paths = Mutex<[RequestID: String]>([:])
    private let entries = Mutex<[String: Entry]>([:])

    func connection(_ connection: HTTPConnection, willSend request: HTTPRequest, id: RequestID) -> HTTPRequest {
        paths.withLock { $0[id] = request.target }
        return request
    }

    func connection(_ connection: HTTPConnection, request id: RequestID, didReceiveData data: Data, bytesSoFar: Int64, expectedTotal: Int64?) {
        update(id) { $0.taken = Int(bytesSoFar) }
    }

    func connection(_ connection: HTTPConnection, request id: RequestID, didFinishWith response: HTTPResponse) {
        update(id) { $0.terminal.append("finished") }
    }

    func connection(_ connection: HTTPConnection, request id: RequestID, didFailWith error: HTTPConnectionError) {
        update(id) { $0.terminal.append("failed \(error.kindName)") }
    }

    func connection(_ connection: HTTPConnection, didCancel id: RequestID) {
        update(id) { $0.terminal.append("cancelled") }
    }

    private func update(_ id: RequestID, _ change: (inout Entry) -> Void) {
        guard let path = paths.withLock({ $0[id] }) else { return }
        entries.withLock { change(&$0[path, default: Entry()]) }
    }

    /// The octets of the download's body the transport has read.
    func taken(_ path: String) -> Int { entries.withLock { $0[path]?.taken ?? 0 } }

    /// The download's terminal events.
    func terminal(_ path: String) -> [String] { entries.withLock { $0[path]?.terminal ?? [] } }
}
