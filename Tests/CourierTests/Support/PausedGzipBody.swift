@testable import Courier
import CourierTestSupport
import Foundation
import Testing

/// A gzip body of 8 MiB that compresses about 20-fold (within the default ratio limit of 100,
/// and spread over many reads and DATA frames), and a reader that holds still with a full buffer
/// before each take: what a paused reader of a content-coded stream holds can be measured.
enum PausedGzipBody {
    /// The decoded body: a sentence and two pseudo-random octets, over and over.
    static let plain: Data = {
        let sentence = Array("Courier streams a gzip body to a reader that pauses; every octet counts. ".utf8)
        var body = Data()
        body.reserveCapacity((8 << 20) + 128)
        var state: UInt32 = 12345
        while body.count < 8 << 20 {
            body.append(contentsOf: sentence)
            state = state &* 1_103_515_245 &+ 12345
            body.append(UInt8(truncatingIfNeeded: state >> 8))
            body.append(UInt8(truncatingIfNeeded: state >> 16))
        }
        return body.prefix(8 << 20)
    }()

    /// ``plain`` gzip-compressed.
    static let gzip = Data(gzipCompressed(plain))

    /// ``gzip`` without its last 1000 octets: truncated compressed data.
    static let truncated = gzip.prefix(gzip.count - 1000)

    /// ``gzip`` with 200 octets in its middle garbled: corrupt compressed data.
    static let corrupt: Data = {
        var bytes = gzip
        for index in (gzip.count / 2)..<(gzip.count / 2 + 200) { bytes[index] ^= 0x5A }
        return bytes
    }()

    /// 8 MiB of zeros gzip-compressed about a thousandfold: past the default ratio limit of 100.
    static let bomb = Data(gzipCompressed(Data(count: 8 << 20)))

    /// The most decoded octets a paused reader of `buffer` may hold: its high-water mark plus
    /// one decode step.
    static func bound(_ buffer: BodyStreamBuffer) -> Int {
        buffer.highWaterMark + StreamedBodyDecoding.step
    }

    /// How a paused reading went.
    struct Reading {
        /// The octets read.
        var received = Data()
        /// How often the reader found its buffer full.
        var pauses = 0
        /// The error that ended the body, if one did.
        var error: HTTPConnectionError?
        /// Whether the body ended cleanly.
        var ended = false
    }

    /// Reads `body` to its end (or error), holding still before each take until the transport
    /// filled the buffer, ended the body, or the buffer holds the rest of the `expected` octets;
    /// then takes all but half of the buffer, which asks the transport for more, or the rest.
    static func readPausing(_ body: HTTPBodyStream, expected: Int) async -> Reading {
        let buffer = body.buffer
        var reader = BodyReader(body)
        var reading = Reading()
        do throws(HTTPConnectionError) {
            while reader.received.count < expected {
                let soFar = reader.received.count
                let full = await eventually {
                    buffer.room == 0 || buffer.hasEnded || soFar + buffer.highWaterMark - buffer.room >= expected
                }
                #expect(full, "the transport never filled the buffer of a reader that took \(soFar) octets: \(buffer.room) octets of room")
                if buffer.room == 0 && !buffer.hasEnded {
                    reading.pauses += 1
                    // The transport adds nothing while the buffer is full: taking all but half of
                    // it asks for more.
                    try await reader.take(upTo: soFar + buffer.buffered - buffer.highWaterMark / 2)
                } else {
                    try await reader.take(upTo: expected)
                }
                if reader.received.count == soFar { break }  // it ended early
            }
            reading.ended = try await reader.atEnd()
        } catch {
            reading.error = error
        }
        reading.received = reader.received
        return reading
    }
}
