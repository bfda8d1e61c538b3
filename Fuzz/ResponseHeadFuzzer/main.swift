// libFuzzer target: CourierHTTP1's ResponseHeadParser (see Fuzz/README.md).
import CourierHTTP1

/// Checks one input as a response head stream: same outcome in every split, a sane head,
/// a clean round trip (see `checkHeadParser`), and the body framing of what was parsed.
@_cdecl("LLVMFuzzerTestOneInput")
public func responseHeadFuzzer(_ data: UnsafePointer<UInt8>?, _ size: Int) -> CInt {
    let input = UnsafeRawBufferPointer(start: data, count: data == nil ? 0 : size)
    let seed = inputHash(input)
    let limits = headLimits(seed: seed)
    checkHeadParser(ResponseHeadParser.self, input, limits: limits, seed: seed, validate: { head in
        invariant((100...999).contains(head.status), "status \(head.status)")
        invariant((0...9).contains(head.version.major) && (0...9).contains(head.version.minor), "version \(head.version)")
        invariant(isFieldText(head.reason), "reason \(printable(Array(head.reason.utf8)))")
        checkFields(head.fields, limits: limits)
        for method in ["GET", "HEAD", "CONNECT"] {
            do throws(HTTP1Error) {
                switch try BodyFraming.forResponse(head, requestMethod: method) {
                case .contentLength(let length):
                    invariant(length >= 0 && length <= BodyFraming.maxContentLength, "length \(length)")
                    invariant(method == "GET" || method == "CONNECT", "a body for HEAD")
                case .none, .chunked, .untilClose:
                    break
                }
            } catch {
                invariant(error == .invalidContentLength || error == .conflictingContentLength
                          || error == .unsupportedTransferEncoding, "framing error \(error)")
            }
        }
    }, serialize: { $0.serialized() })
    return 0
}
