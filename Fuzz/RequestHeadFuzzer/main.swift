// libFuzzer target: CourierHTTP1's RequestHeadParser (see Fuzz/README.md).
import CourierHTTP1

/// Checks one input as a request head stream: same outcome in every split, a sane head,
/// a clean round trip (see `checkHeadParser`), and a request body framing that is never
/// close-delimited.
@_cdecl("LLVMFuzzerTestOneInput")
public func requestHeadFuzzer(_ data: UnsafePointer<UInt8>?, _ size: Int) -> CInt {
    let input = UnsafeRawBufferPointer(start: data, count: data == nil ? 0 : size)
    let seed = inputHash(input)
    let limits = headLimits(seed: seed)
    checkHeadParser(RequestHeadParser.self, input, limits: limits, seed: seed, validate: { head in
        invariant(isToken(head.method), "method \(printable(Array(head.method.utf8)))")
        invariant(!head.target.isEmpty && head.target.utf8.allSatisfy { $0 > 0x20 && $0 != 0x7F },
                  "target \(printable(Array(head.target.utf8)))")
        invariant(head.version.major == 1 && (0...9).contains(head.version.minor), "version \(head.version)")
        checkFields(head.fields, limits: limits)
        _ = head.keepAlive
        do throws(HTTP1Error) {
            switch try BodyFraming.forRequest(head) {
            case .contentLength(let length):
                invariant(length >= 0 && length <= BodyFraming.maxContentLength, "length \(length)")
            case .chunked:
                invariant(head.version == .http1_1 || head.version.minor > 1, "chunked in \(head.version)")
            case .none:
                break
            case .untilClose:
                invariant(false, "a request body delimited by close")
            }
        } catch {
            invariant(error == .invalidContentLength || error == .conflictingContentLength
                      || error == .unsupportedTransferEncoding, "framing error \(error)")
        }
    }, serialize: { $0.serialized() })
    return 0
}
