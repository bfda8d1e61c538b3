import CourierTestServer

/// Message texts for the durability conversation: a unique tag, then seeded random Unicode
/// (accents precomposed and combining, CJK, Hebrew, emoji with joiners, flags, tabs and
/// newlines) of a random length up to the server's limit of 4,000 characters; some just over
/// it, some holding a control or bidi character the server must refuse.
enum DurabilityText {
    /// The longest text the server accepts, in characters (``TextRules/maxTextLength``).
    static let limit = 4_000

    private static let pieces = ["a", "é", "e\u{301}", "日本語", "👩‍💻", "🇫🇷", "\n", "\t", "שלום", " ", "ß", "Ω", "😀", "k\u{200D}", "-"]

    /// A new text starting with `tag`, and whether the server must accept it.
    static func make(tag: String, random: inout SeededRandom) -> (text: String, accepted: Bool) {
        let target: Int
        switch random.next() % 10 {
        case 0: target = limit
        case 1: target = limit + 1 + (random.next() % 2 == 0 ? 0 : Int(random.next() % 50))
        case 2, 3: target = 100 + Int(random.next() % UInt64(limit - 100))
        default: target = tag.count + 1 + Int(random.next() % 60)
        }
        // The pieces do not join across their boundaries, so their counts add up (checked below).
        var text = tag + " "
        var count = text.count
        while count < target - 8 {
            let piece = pieces[Int(random.next() % UInt64(pieces.count))]
            text += piece
            count += piece.count
        }
        text += String(repeating: "x", count: max(0, target - count))
        if random.next() % 12 == 0 {
            let hostile: Character = random.next() % 2 == 0 ? "\u{1B}" : "\u{202E}"
            text.insert(hostile, at: text.index(text.startIndex, offsetBy: tag.count + 1))
            return (text, false)
        }
        return (text, text.count <= limit)
    }
}
