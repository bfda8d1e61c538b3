// The checks common to the response-head and request-head fuzz targets.
import CourierHTTP1

/// What the two head parsers have in common, so one set of checks covers both.
protocol FuzzableHeadParser {
    associatedtype Head: Equatable
    init(limits: HTTP1Limits)
    mutating func parse(_ bytes: UnsafeRawBufferPointer) throws(HTTP1Error) -> (head: Head, consumed: Int)?
}

extension ResponseHeadParser: FuzzableHeadParser {}
extension RequestHeadParser: FuzzableHeadParser {}

/// How feeding a byte stream to a head parser ended.
enum HeadOutcome<Head: Equatable>: Equatable {
    /// Every byte was taken and the head is not complete yet.
    case incomplete
    /// The parser threw (errors compare by kind).
    case failed(HTTP1Error)
    /// A head ended at this absolute offset of the stream.
    case parsed(Head, end: Int)
}

/// Feeds `input` to `parser` in the pieces given by `cuts`, and checks the per-call contract:
/// a call that returns a head consumed at least one and at most all bytes of its piece.
/// - Returns: The outcome, with offsets relative to `input`.
func feed<P: FuzzableHeadParser>(
    _ parser: inout P, _ input: UnsafeRawBufferPointer, cuts: [Int]
) -> HeadOutcome<P.Head> {
    for (offset, piece) in pieces(input, cuts: cuts) {
        do {
            if let result = try parser.parse(piece) {
                invariant(result.consumed >= 1 && result.consumed <= piece.count,
                          "consumed \(result.consumed) of a piece of \(piece.count) bytes")
                return .parsed(result.head, end: offset + result.consumed)
            }
        } catch {
            return .failed(error)
        }
    }
    return .incomplete
}

/// Runs every check that does not depend on the kind of head:
///
/// 1. The outcome is the same whether the input arrives whole, cut in two or three at
///    pseudo-random points, or one byte at a time.
/// 2. A parsed head ends on a LF, inside the input and inside the size limit.
/// 3. The bytes up to the end of the head, alone, give the same head (nothing after the
///    head was looked at).
/// 4. After a head, the same parser (which reset itself) reads the rest of the stream exactly
///    like a fresh parser.
/// 5. `validate` accepts the head, and serializing it and parsing the result gives it back.
/// - Parameters:
///   - type: The parser type.
///   - input: The fuzz input.
///   - limits: The limits to parse with.
///   - seed: From `inputHash`.
///   - validate: Checks a parsed head's fields against the grammar.
///   - serialize: The head's wire form.
func checkHeadParser<P: FuzzableHeadParser>(
    _ type: P.Type, _ input: UnsafeRawBufferPointer, limits: HTTP1Limits, seed: UInt64,
    validate: (P.Head) -> Void, serialize: (P.Head) -> [UInt8]
) {
    var wholeParser = P(limits: limits)
    let whole = feed(&wholeParser, input, cuts: [])
    for cuts in splits(count: input.count, seed: seed).dropFirst() {
        var parser = P(limits: limits)
        let outcome = feed(&parser, input, cuts: cuts)
        invariant(outcome == whole, "whole: \(whole), cut at \(cuts.prefix(4)): \(outcome); input \(printable(input))")
    }
    guard case .parsed(let head, let end) = whole else { return }
    invariant(end <= input.count, "head ends at \(end) past the input (\(input.count))")
    invariant(input[end - 1] == 0x0A, "head does not end with LF")
    invariant(end <= limits.maxHeadBytes, "head of \(end) bytes passed the \(limits.maxHeadBytes)-byte limit")
    validate(head)

    let prefix = UnsafeRawBufferPointer(rebasing: input[..<end])
    var prefixParser = P(limits: limits)
    invariant(feed(&prefixParser, prefix, cuts: []) == whole, "the head's own bytes parse differently")

    let rest = UnsafeRawBufferPointer(rebasing: input[end...])
    var fresh = P(limits: limits)
    invariant(feed(&wholeParser, rest, cuts: []) == feed(&fresh, rest, cuts: []),
              "a parser that just returned a head reads the next bytes differently from a fresh one")

    // Round trip with room to spare: serializing adds CRs and may widen invalid UTF-8.
    let wire = serialize(head)
    var roomy = P(limits: HTTP1Limits(maxHeadBytes: 1 << 22, maxFieldCount: limits.maxFieldCount))
    let again = wire.withUnsafeBytes { feed(&roomy, $0, cuts: []) }
    invariant(again == .parsed(head, end: wire.count),
              "serialize-and-parse changed the head: \(head) -> \(again); wire \(printable(wire))")
}

/// Checks the header fields of a parsed head: at most `maxFieldCount`, token names, valid
/// trimmed values.
func checkFields(_ fields: [HTTPField], limits: HTTP1Limits) {
    invariant(fields.count <= limits.maxFieldCount, "\(fields.count) fields, limit \(limits.maxFieldCount)")
    for field in fields {
        invariant(isToken(field.name), "field name \(printable(Array(field.name.utf8))) is not a token")
        invariant(isTrimmedFieldValue(field.value), "field value \(printable(Array(field.value.utf8))) is not valid")
    }
}

/// The limits for one input: the defaults, or small ones (derived from the hash) so that short
/// inputs reach the size and count limits.
func headLimits(seed: UInt64) -> HTTP1Limits {
    guard seed & 1 == 1 else { return HTTP1Limits() }
    return HTTP1Limits(maxHeadBytes: 16 + Int((seed >> 8) % 512), maxFieldCount: Int((seed >> 20) % 8))
}
