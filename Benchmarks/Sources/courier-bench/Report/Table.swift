/// A table of results, rendered as Markdown with padded columns so that it reads the same in a
/// terminal and in a Markdown file.
struct Table: Sendable {
    /// The heading.
    var title: String
    /// Lines printed under the heading (the server, settings).
    var subtitle: [String] = []
    /// The column names.
    var header: [String]
    /// The cells, one array per row.
    var rows: [[String]] = []
    /// Lines printed under the table.
    var notes: [String] = []
    /// How many leading columns are text, aligned left; the others are numbers, aligned right.
    var textColumns = 1

    /// The Markdown text: `### title`, the subtitle, the table, the notes.
    func markdown() -> String {
        let widths = header.indices.map { column in
            ([header] + rows).map { column < $0.count ? $0[column].count : 0 }.max() ?? 0
        }
        func line(_ cells: [String]) -> String {
            let padded = header.indices.map { column -> String in
                let cell = column < cells.count ? cells[column] : ""
                let padding = String(repeating: " ", count: max(widths[column] - cell.count, 0))
                return column < textColumns ? cell + padding : padding + cell
            }
            return "| " + padded.joined(separator: " | ") + " |"
        }
        let rule = "|" + widths.indices.map { $0 < textColumns ? String(repeating: "-", count: widths[$0] + 2)
            : String(repeating: "-", count: widths[$0] + 1) + ":" }.joined(separator: "|") + "|"
        var text = "### \(title)\n\n"
        if !subtitle.isEmpty { text += subtitle.joined(separator: "\n") + "\n\n" }
        text += ([line(header), rule] + rows.map(line)).joined(separator: "\n") + "\n"
        if !notes.isEmpty { text += "\n" + notes.joined(separator: "\n") + "\n" }
        return text
    }
}
