// libFuzzer target: CourierHTTP1's BodyDecoder with chunked framing (see Fuzz/README.md).
import CourierHTTP1

/// How decoding a byte stream as a chunked body ended.
struct ChunkedOutcome: Equatable {
    var payload: [UInt8] = []
    /// Bytes of the stream that belonged to the body (0 after an error).
    var consumed = 0
    var complete = false
    /// The error, compared by kind.
    var error: HTTP1Error?
    var trailers: [HTTPField] = []
}

/// Decodes `input` in the pieces given by `cuts`, checking the per-call contract:
/// a call takes every byte of its piece unless the body completed, `payloadBytes` counts
/// what was emitted, and a complete decoder takes nothing more.
func decodeChunked(_ input: UnsafeRawBufferPointer, cuts: [Int], limits: HTTP1Limits) -> ChunkedOutcome {
    var decoder = BodyDecoder(framing: .chunked, limits: limits)
    var outcome = ChunkedOutcome()
    for (_, piece) in pieces(input, cuts: cuts) {
        do {
            let result = try decoder.decode(piece) { run in outcome.payload.append(contentsOf: run) }
            invariant(result.consumed >= 0 && result.consumed <= piece.count, "consumed \(result.consumed) of \(piece.count)")
            invariant(result.isComplete == decoder.isComplete, "isComplete disagrees")
            invariant(result.isComplete || result.consumed == piece.count,
                      "an incomplete body left \(piece.count - result.consumed) bytes unconsumed")
            outcome.consumed += result.consumed
            if result.isComplete {
                outcome.complete = true
                break
            }
        } catch let error as HTTP1Error {
            // How many bytes earlier calls took says nothing once the stream is broken.
            outcome.error = error
            outcome.consumed = 0
            break
        } catch {
            invariant(false, "a non-HTTP1Error was thrown: \(error)")
        }
    }
    invariant(decoder.payloadBytes == outcome.payload.count, "payloadBytes \(decoder.payloadBytes) != \(outcome.payload.count)")
    if outcome.complete {
        outcome.trailers = decoder.trailers
        var emittedAfter = 0
        let after = try? [UInt8]("0\r\n\r\n".utf8).withUnsafeBytes { more in
            try decoder.decode(more) { emittedAfter += $0.count }
        }
        invariant(after.map { $0.consumed == 0 && $0.isComplete } == true && emittedAfter == 0,
                  "a complete decoder took more bytes")
        do {
            try decoder.finishOnClose()
        } catch {
            invariant(false, "finishOnClose threw after completion: \(error)")
        }
    } else if outcome.error == nil {
        do {
            try decoder.finishOnClose()
            invariant(false, "an incomplete chunked body was accepted at close")
        } catch {
            invariant(error == .truncatedBody, "finishOnClose threw \(error)")
        }
    }
    return outcome
}

/// Encodes `payload` in chunks whose sizes come from `random`, with occasional chunk
/// extensions, then the last chunk with `trailers`.
func encodeChunked(_ payload: [UInt8], trailers: [HTTPField], random: inout SplitMix64) -> [UInt8] {
    var wire: [UInt8] = []
    var offset = 0
    while offset < payload.count {
        let size = 1 + random.next(upTo: Swift.min(payload.count - offset - 1, 300))
        if random.next() % 4 == 0 {
            // An extension, which decoders must accept and ignore.
            var header = ChunkedEncoder.chunkHeader(count: size)
            header.insert(contentsOf: Array(";ext=\"v\"".utf8), at: header.count - 2)
            wire += header
            wire += payload[offset..<(offset + size)]
            wire += ChunkedEncoder.chunkTerminator
        } else {
            wire += ChunkedEncoder.chunk(payload[offset..<(offset + size)])
        }
        offset += size
    }
    wire += trailers.isEmpty ? ChunkedEncoder.lastChunk : ChunkedEncoder.lastChunk(trailers: trailers)
    return wire
}

/// Checks one input twice over:
///
/// - as a chunked body off the wire: the same outcome in every split; the body's own bytes
///   alone decode the same; a complete body re-encoded (other chunk sizes, its trailers)
///   decodes to the same payload and trailers;
/// - as a payload: encoding it in pseudo-random chunks (with extensions and trailers) and
///   decoding in every split gives it back exactly, and stops at the body's end even when
///   the next message follows.
@_cdecl("LLVMFuzzerTestOneInput")
public func chunkedBodyFuzzer(_ data: UnsafePointer<UInt8>?, _ size: Int) -> CInt {
    let input = UnsafeRawBufferPointer(start: data, count: data == nil ? 0 : size)
    let seed = inputHash(input)
    var random = SplitMix64(seed: seed)
    let limits = seed & 1 == 0 ? HTTP1Limits() : HTTP1Limits(
        maxFieldCount: random.next(upTo: 4), maxChunkLineBytes: 3 + random.next(upTo: 40),
        maxTrailerBytes: 2 + random.next(upTo: 200))
    let roomy = HTTP1Limits(maxFieldCount: 1000, maxChunkLineBytes: 4096, maxTrailerBytes: 1 << 22)

    // 1. The input as wire bytes.
    let whole = decodeChunked(input, cuts: [], limits: limits)
    invariant(whole.consumed <= input.count, "consumed \(whole.consumed) of \(input.count)")
    for cuts in splits(count: input.count, seed: seed).dropFirst() {
        let outcome = decodeChunked(input, cuts: cuts, limits: limits)
        invariant(outcome == whole, "whole: \(whole), cut at \(cuts.prefix(4)): \(outcome); input \(printable(input))")
    }
    if whole.complete {
        invariant(whole.trailers.count <= limits.maxFieldCount, "\(whole.trailers.count) trailers")
        checkTrailers(whole.trailers)
        let own = decodeChunked(UnsafeRawBufferPointer(rebasing: input[..<whole.consumed]), cuts: [], limits: limits)
        invariant(own == whole, "the body's own bytes decode differently: \(own)")
        let again = encodeChunked(whole.payload, trailers: whole.trailers, random: &random)
        let reencoded = again.withUnsafeBytes { decodeChunked($0, cuts: [], limits: roomy) }
        invariant(reencoded.complete && reencoded.payload == whole.payload && reencoded.trailers == whole.trailers
                  && reencoded.consumed == again.count,
                  "re-encoding does not round-trip: \(reencoded) from \(printable(again))")
    }

    // 2. The input as a payload.
    let payload = Array(input)
    let trailers = random.next() % 3 == 0 ? [HTTPField(name: "X-Checksum", value: String(seed, radix: 16))] : []
    let wire = encodeChunked(payload, trailers: trailers, random: &random)
    let next = Array("HTTP/1.1 200 OK\r\n".utf8)
    let stream = wire + next
    stream.withUnsafeBytes { bytes in
        for cuts in splits(count: bytes.count, seed: seed &+ 1, byteByByteUpTo: 128) {
            let outcome = decodeChunked(bytes, cuts: cuts, limits: roomy)
            invariant(outcome.complete && outcome.error == nil && outcome.payload == payload
                      && outcome.consumed == wire.count && outcome.trailers == trailers,
                      "encoded payload of \(payload.count) bytes decoded to \(outcome), cut at \(cuts.prefix(4))")
        }
    }
    return 0
}

/// Checks trailer fields against the field grammar.
func checkTrailers(_ fields: [HTTPField]) {
    for field in fields {
        invariant(isToken(field.name), "trailer name \(printable(Array(field.name.utf8)))")
        invariant(isTrimmedFieldValue(field.value), "trailer value \(printable(Array(field.value.utf8)))")
    }
}
