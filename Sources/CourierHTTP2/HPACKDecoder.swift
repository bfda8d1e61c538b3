/// Decodes HTTP/2 field blocks (RFC 7541), keeping the dynamic table between blocks.
///
/// One decoder serves one connection direction: feed it every complete field block (a
/// HEADERS or PUSH_PROMISE fragment and its CONTINUATIONs, concatenated) in the order received.
///
/// Errors: `headerListTooLarge` is thrown only after the whole block has been processed, so
/// the dynamic table stays in step with the peer's encoder and the connection can continue
/// (the stream is refused). Every other `HPACKError` leaves the table out of step: it is a
/// connection error of type `COMPRESSION_ERROR` (RFC 9113 §4.3), and the decoder must not be
/// used again.
public struct HPACKDecoder: Sendable {
    /// The most octets a decoded field list may take, counting name + value + 32 per field
    /// (what `SETTINGS_MAX_HEADER_LIST_SIZE` advertises). This is what bounds an "HPACK bomb"
    /// of repeated references to a large table entry.
    public var maxHeaderListSize: Int
    /// The most octets one decoded name or value may have.
    public var maxStringLength: Int
    /// The largest dynamic table the peer's encoder may use: the `SETTINGS_HEADER_TABLE_SIZE`
    /// this side advertised and the peer acknowledged.
    public private(set) var maxTableSizeLimit: Int

    private var table: HPACKDynamicTable
    /// The literals decoded lately, shared when the peer sends them again.
    private(set) var strings = HPACKStringCache()
    /// Set when the limit was lowered below the table's current size: the next block must
    /// start with a size update at or below the limit (§4.2).
    private var sizeUpdateRequired = false

    /// Creates a decoder.
    /// - Parameters:
    ///   - maxTableSize: The `SETTINGS_HEADER_TABLE_SIZE` advertised (4,096 by default, the
    ///     protocol's initial value); the dynamic table starts at this size.
    ///   - maxHeaderListSize: See `maxHeaderListSize` (64 KiB by default).
    ///   - maxStringLength: See `maxStringLength` (64 KiB by default).
    public init(maxTableSize: Int = 4096, maxHeaderListSize: Int = 65_536, maxStringLength: Int = 65_536) {
        self.maxTableSizeLimit = maxTableSize
        self.maxHeaderListSize = maxHeaderListSize
        self.maxStringLength = maxStringLength
        self.table = HPACKDynamicTable(maxSize: maxTableSize)
    }

    /// The dynamic table's current size (name + value octets + 32 per entry).
    public var dynamicTableSize: Int { table.size }
    /// The dynamic table's current maximum, as last set by the peer's size updates.
    public var dynamicTableMaxSize: Int { table.maxSize }
    /// The number of entries in the dynamic table.
    public var dynamicTableCount: Int { table.count }
    /// The dynamic table's entries, newest first (index 62 first).
    var dynamicTableEntries: [HPACKHeaderField] { (0..<table.count).map { table[$0] } }

    /// Changes the limit once the peer has acknowledged a new `SETTINGS_HEADER_TABLE_SIZE`.
    /// When the new limit is below the table's current maximum, the next block must begin with
    /// a dynamic table size update at or below it.
    /// - Parameter limit: The new limit.
    public mutating func setMaxTableSizeLimit(_ limit: Int) {
        maxTableSizeLimit = limit
        if limit < table.maxSize { sizeUpdateRequired = true }
    }

    /// Decodes one complete field block.
    /// - Parameter block: The field block's octets.
    /// - Returns: The fields in order, each with the `indexing` it arrived with.
    /// - Throws: An `HPACKError` (see the type's discussion for which ones end the connection).
    public mutating func decode(_ block: [UInt8]) throws(HPACKError) -> [HPACKHeaderField] {
        var position = 0
        var fields: [HPACKHeaderField] = []
        // A field takes at least one octet; a response's few fields then need no regrowth.
        fields.reserveCapacity(min(block.count, 16))
        var listSize = 0
        var sawField = false
        while position < block.count {
            let byte = block[position]
            if byte & 0xe0 == 0x20 {
                guard !sawField else { throw .misplacedTableSizeUpdate }
                let size = try HPACKInteger.decode(block, at: &position, prefixBits: 5)
                guard size <= maxTableSizeLimit else {
                    throw HPACKError.tableSizeUpdateTooLarge.with("\(size), limit \(maxTableSizeLimit)")
                }
                table.resize(to: size)
                sizeUpdateRequired = false
                continue
            }
            guard !sizeUpdateRequired else { throw .missingTableSizeUpdate }
            sawField = true
            let field = try decodeField(block, at: &position)
            listSize += field.size
            if listSize <= maxHeaderListSize { fields.append(field) }
        }
        if listSize > maxHeaderListSize {
            throw HPACKError.headerListTooLarge.with("over \(maxHeaderListSize) octets")
        }
        return fields
    }

    /// Decodes one field representation (indexed or literal, §6.1 to §6.2.3).
    private mutating func decodeField(_ block: [UInt8], at position: inout Int) throws(HPACKError) -> HPACKHeaderField {
        let byte = block[position]
        if byte & 0x80 != 0 {
            let index = try HPACKInteger.decode(block, at: &position, prefixBits: 7)
            return try entry(at: index)
        }
        let indexing: HPACKIndexing = byte & 0xc0 == 0x40 ? .automatic : byte & 0xf0 == 0x10 ? .never : .withoutIndexing
        let nameIndex = try HPACKInteger.decode(block, at: &position, prefixBits: indexing == .automatic ? 6 : 4)
        let name = nameIndex == 0
            ? try strings.decode(block, at: &position, maxLength: maxStringLength)
            : try entry(at: nameIndex).name
        let value = try strings.decode(block, at: &position, maxLength: maxStringLength)
        let field = HPACKHeaderField(name: name, value: value, indexing: indexing)
        if indexing == .automatic { table.insert(field) }
        return field
    }

    /// The entry at an HPACK index: 1...61 static, 62... dynamic (§2.3.3).
    private func entry(at index: Int) throws(HPACKError) -> HPACKHeaderField {
        if index >= 1, index <= HPACKStaticTable.count {
            let entry = HPACKStaticTable.entries[index - 1]
            return HPACKHeaderField(name: entry.name, value: entry.value)
        }
        let position = index - HPACKStaticTable.count - 1
        guard index > 0, position < table.count else {
            throw HPACKError.invalidIndex.with("index \(index), \(table.count) dynamic entries")
        }
        return table[position]
    }
}
