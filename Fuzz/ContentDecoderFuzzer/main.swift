// libFuzzer target: CourierHTTP1's ContentDecoder (gzip / deflate within limits); see Fuzz/README.md.
import CourierHTTP1
import CZlib

/// The first three input bytes choose the case; the rest is the payload.
///
/// - byte 0, bits 0–1: 0 = the payload is a gzip body, 1 = a deflate body (decoded as
///   received); 2 = the payload is compressed here as gzip, 3 = as deflate, and must come back
///   exactly. Bit 2: gzip in two members / deflate without the zlib wrapper (raw). Bit 3:
///   trailing garbage after the stream. Bits 4–5: compression level 0, 1, 6 or 9.
/// - byte 1: the output limit; byte 2: the ratio limit (0 = off).
struct Case {
    static let outputLimits = [0, 1, 17, 1000, 4096, 65_536, 100_000, 1 << 20]
    static let ratios = [0, 0, 0, 1, 3, 10, 100, 1000]

    var mode: Int
    var secondMemberOrRaw: Bool
    var trailingGarbage: Bool
    var level: Int32
    var maxOutputBytes: Int
    var maxRatio: Int

    init(_ control: UnsafeRawBufferPointer) {
        let flags = control.count > 0 ? control[0] : 0
        mode = Int(flags & 3)
        secondMemberOrRaw = flags & 4 != 0
        trailingGarbage = flags & 8 != 0
        level = [0, 1, 6, 9][Int((flags >> 4) & 3)]
        maxOutputBytes = Case.outputLimits[Int((control.count > 1 ? control[1] : 7) % 8)]
        maxRatio = Case.ratios[Int((control.count > 2 ? control[2] : 0) % 8)]
    }

    var encoding: ContentDecoder.Encoding { mode % 2 == 0 ? .gzip : .deflate }
}

/// How decoding ended.
struct InflateOutcome {
    var output: [UInt8] = []
    var error: HTTP1Error?
}

/// Decodes `input` in pieces, checking after every call that the output so far is within the
/// size limit and (past 64 KiB) within the ratio limit, and that an error sticks.
func inflate(_ input: UnsafeRawBufferPointer, cuts: [Int], _ test: Case) -> InflateOutcome {
    guard let decoder = ContentDecoder(encoding: test.encoding, maxOutputBytes: test.maxOutputBytes, maxRatio: test.maxRatio) else {
        invariant(false, "zlib could not allocate a decoder")
        return InflateOutcome()
    }
    var outcome = InflateOutcome()
    var fed = 0
    do throws(HTTP1Error) {
        for (_, piece) in pieces(input, cuts: cuts) {
            fed += piece.count
            outcome.output += try decoder.decode(piece)
            invariant(outcome.output.count <= test.maxOutputBytes,
                      "\(outcome.output.count) decoded bytes passed the limit of \(test.maxOutputBytes)")
            if test.maxRatio > 0 {
                let (allowed, overflow) = Swift.max(fed, 1).multipliedReportingOverflow(by: test.maxRatio)
                invariant(overflow || outcome.output.count <= Swift.max(64 * 1024, allowed),
                          "\(outcome.output.count) bytes from \(fed) passed ratio \(test.maxRatio)")
            }
        }
        try decoder.finish()
    } catch {
        outcome.error = error
        invariant(error == .decompressionFailed || error == .decompressionLimitExceeded, "unexpected error \(error)")
        var sticks = false
        do throws(HTTP1Error) {
            _ = try [UInt8]([0x1F, 0x8B, 0]).withBytesForFuzz { (bytes) throws(HTTP1Error) in try decoder.decode(bytes) }
        } catch let again {
            sticks = again == error
        }
        invariant(sticks, "after \(error) the decoder accepted more input")
    }
    return outcome
}

extension Array where Element == UInt8 {
    /// `withUnsafeBytes` for a typed-throws body.
    func withBytesForFuzz<R>(_ body: (UnsafeRawBufferPointer) throws(HTTP1Error) -> R) throws(HTTP1Error) -> R {
        let result: Result<R, HTTP1Error> = withUnsafeBytes { buffer in
            do throws(HTTP1Error) {
                return .success(try body(buffer))
            } catch {
                return .failure(error)
            }
        }
        return try result.get()
    }
}

/// Compresses with zlib: `windowBits` 31 = gzip, 15 = zlib, -15 = raw deflate.
func compress(_ payload: ArraySlice<UInt8>, windowBits: Int32, level: Int32) -> [UInt8] {
    var stream = z_stream()
    guard deflateInit2_(&stream, level, Z_DEFLATED, windowBits, 8, Z_DEFAULT_STRATEGY,
                        ZLIB_VERSION, Int32(MemoryLayout<z_stream>.size)) == Z_OK else {
        invariant(false, "deflateInit2 failed")
        return []
    }
    defer { deflateEnd(&stream) }
    var source = Array(payload)
    var output = [UInt8](repeating: 0, count: Int(deflateBound(&stream, UInt(source.count))) + 64)
    let status = source.withUnsafeMutableBytes { input in
        output.withUnsafeMutableBytes { out in
            stream.next_in = input.baseAddress?.assumingMemoryBound(to: Bytef.self)
            stream.avail_in = UInt32(input.count)
            stream.next_out = out.baseAddress?.assumingMemoryBound(to: Bytef.self)
            stream.avail_out = UInt32(out.count)
            return deflate(&stream, Z_FINISH)
        }
    }
    invariant(status == Z_STREAM_END, "deflate returned \(status)")
    output.removeLast(Int(stream.avail_out))
    return output
}

/// Checks one input: the limits hold after every call; splitting the input never changes
/// the result (without a ratio limit, which depends on how much input was seen); compressed
/// payloads come back exactly when they fit the limit and stop with
/// `.decompressionLimitExceeded` when they do not, never having produced more than the limit.
@_cdecl("LLVMFuzzerTestOneInput")
public func contentDecoderFuzzer(_ data: UnsafePointer<UInt8>?, _ size: Int) -> CInt {
    let all = UnsafeRawBufferPointer(start: data, count: data == nil ? 0 : size)
    let controlCount = Swift.min(3, all.count)
    let test = Case(UnsafeRawBufferPointer(rebasing: all[..<controlCount]))
    let payload = Array(all[controlCount...])
    let seed = inputHash(all)

    var wire: [UInt8]
    switch test.mode {
    case 0, 1:
        wire = payload
    case 2:
        if test.secondMemberOrRaw {
            let half = payload.count / 2
            wire = compress(payload[..<half], windowBits: 31, level: test.level)
                + compress(payload[half...], windowBits: 31, level: test.level)
        } else {
            wire = compress(payload[...], windowBits: 31, level: test.level)
        }
    default:
        wire = compress(payload[...], windowBits: test.secondMemberOrRaw ? -15 : 15, level: test.level)
    }
    if test.mode >= 2 && test.trailingGarbage {
        wire += Array("garbage".utf8)
    }

    wire.withUnsafeBytes { input in
        let whole = inflate(input, cuts: [], test)
        if test.mode >= 2 {
            if payload.count <= test.maxOutputBytes && (test.maxRatio == 0 || whole.error == nil) {
                invariant(whole.error == nil && whole.output == payload,
                          "round trip of \(payload.count) bytes failed: \(String(describing: whole.error)), \(whole.output.count) bytes")
            } else {
                invariant(whole.error == .decompressionLimitExceeded, "over the limit but \(String(describing: whole.error))")
                invariant(payload.starts(with: whole.output), "output before the limit error is not a prefix")
            }
        }
        for cuts in splits(count: input.count, seed: seed, byteByByteUpTo: 64).dropFirst() {
            let outcome = inflate(input, cuts: cuts, test)
            guard test.maxRatio == 0 else { continue }
            switch (whole.error, outcome.error) {
            case (nil, nil):
                invariant(outcome.output == whole.output, "cut at \(cuts.prefix(4)) changed the output")
            case (.some, .some):
                let shorter = Swift.min(outcome.output.count, whole.output.count)
                invariant(outcome.output.prefix(shorter) == whole.output.prefix(shorter), "outputs diverge")
            default:
                invariant(false, "whole: \(String(describing: whole.error)), cut at \(cuts.prefix(4)): \(String(describing: outcome.error))")
            }
        }
    }
    return 0
}
