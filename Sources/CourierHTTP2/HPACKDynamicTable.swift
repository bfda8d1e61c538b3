/// The HPACK dynamic table (RFC 7541 §2.3.2, §4): newest entry first, entries evicted from the
/// oldest end when the size (name + value octets + 32 each) would exceed `maxSize`.
struct HPACKDynamicTable: Sendable {
    /// Entries oldest first, from `head`; slots before `head` are evicted and reused on compaction.
    private var storage: [HPACKHeaderField] = []
    private var head = 0

    /// The current size in the §4.1 sense.
    private(set) var size = 0
    /// The maximum size; inserting beyond it evicts.
    private(set) var maxSize: Int

    /// Creates an empty table.
    /// - Parameter maxSize: The maximum size.
    init(maxSize: Int) {
        self.maxSize = maxSize
    }

    /// The number of entries.
    var count: Int { storage.count - head }

    /// The entry at a 0-based dynamic position (0 is the newest, HPACK index 62).
    /// - Parameter position: A position in `0..<count`.
    subscript(position: Int) -> HPACKHeaderField {
        storage[storage.count - 1 - position]
    }

    /// Adds an entry, evicting the oldest entries first; an entry larger than `maxSize` empties
    /// the table and is not added (§4.4).
    /// - Parameter field: The field to add.
    mutating func insert(_ field: HPACKHeaderField) {
        let entrySize = field.size
        evict(toFit: maxSize - entrySize)
        guard entrySize <= maxSize else { return }
        var stored = field
        stored.indexing = .automatic
        storage.append(stored)
        size += entrySize
    }

    /// Changes the maximum size, evicting entries to fit (§4.3).
    /// - Parameter newMaxSize: The new maximum.
    mutating func resize(to newMaxSize: Int) {
        maxSize = newMaxSize
        evict(toFit: newMaxSize)
    }

    /// The position of the newest entry matching name and value, and otherwise of the newest
    /// entry matching the name.
    /// - Parameters:
    ///   - name: The field name.
    ///   - value: The field value.
    /// - Returns: The position of a full match, or else of a name match (each `nil` when none).
    func find(name: String, value: String) -> (field: Int?, name: Int?) {
        var nameMatch: Int?
        for position in 0..<count {
            let entry = self[position]
            guard entry.name == name else { continue }
            if entry.value == value { return (position, nameMatch ?? position) }
            if nameMatch == nil { nameMatch = position }
        }
        return (nil, nameMatch)
    }

    private mutating func evict(toFit limit: Int) {
        while size > Swift.max(limit, 0), head < storage.count {
            size -= storage[head].size
            head += 1
        }
        if head > 32, head * 2 > storage.count {
            storage.removeFirst(head)
            head = 0
        }
    }
}
