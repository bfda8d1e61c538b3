/// Encodes HTTP/2 field blocks (RFC 7541), keeping the dynamic table between blocks.
///
/// One encoder serves one connection direction. For each field it sends, in order of
/// preference: an index when a static or dynamic entry matches name and value; otherwise a
/// literal with incremental indexing, naming the static entry (else the dynamic one) when only
/// the name matches. Fields whose `indexing` is `.never`, and fields whose name is in
/// `neverIndexedNames`, use the literal never-indexed representation; fields whose `indexing`
/// is `.withoutIndexing`, or that are larger than the table, use a literal without indexing;
/// neither enters the table. String literals are Huffman-encoded when that is not longer (see `huffman`).
public struct HPACKEncoder: Sendable {
    /// The names whose fields are always sent never-indexed: by default `authorization`,
    /// `proxy-authorization`, `cookie` and `set-cookie`, which carry credentials that must not
    /// sit in a compression context another request could probe (RFC 7541 §7.1).
    public var neverIndexedNames: Set<String>
    /// When string literals are Huffman-encoded.
    public var huffman: HPACKHuffmanPolicy

    private var table: HPACKDynamicTable
    /// The most this side lets its table grow to, whatever the peer allows.
    private let tableSizeCap: Int
    /// The smallest and the last table size chosen since the last block, when they must be
    /// announced with size updates at the start of the next block (§4.2).
    private var pendingUpdate: (smallest: Int, last: Int)?

    /// Creates an encoder.
    /// - Parameters:
    ///   - maxTableSize: The dynamic table size to start with, and the most it will ever use
    ///     (4,096 by default, the protocol's initial `SETTINGS_HEADER_TABLE_SIZE`).
    ///   - huffman: When to Huffman-encode string literals.
    ///   - neverIndexedNames: See `neverIndexedNames`.
    public init(
        maxTableSize: Int = 4096,
        huffman: HPACKHuffmanPolicy = .whenNotLonger,
        neverIndexedNames: Set<String> = ["authorization", "proxy-authorization", "cookie", "set-cookie"]
    ) {
        self.table = HPACKDynamicTable(maxSize: maxTableSize)
        self.tableSizeCap = maxTableSize
        self.huffman = huffman
        self.neverIndexedNames = neverIndexedNames
    }

    /// The dynamic table's current size (name + value octets + 32 per entry).
    public var dynamicTableSize: Int { table.size }
    /// The dynamic table's current maximum.
    public var dynamicTableMaxSize: Int { table.maxSize }
    /// The number of entries in the dynamic table.
    public var dynamicTableCount: Int { table.count }
    /// The dynamic table entry at a 0-based position, newest first.
    func tableEntry(_ position: Int) -> HPACKHeaderField { table[position] }

    /// Applies the peer's `SETTINGS_HEADER_TABLE_SIZE`: the table becomes the smaller of that
    /// and the size this encoder was created with, and the change is announced at the start
    /// of the next block.
    /// - Parameter peerLimit: The value the peer sent.
    public mutating func setPeerMaxTableSize(_ peerLimit: Int) {
        let size = Swift.min(peerLimit, tableSizeCap)
        guard size != table.maxSize || pendingUpdate != nil else { return }
        table.resize(to: size)
        let smallest = Swift.min(pendingUpdate?.smallest ?? size, size)
        pendingUpdate = (smallest, size)
    }

    /// Appends the field block of `fields` to `output`.
    /// - Parameters:
    ///   - fields: The fields, in order (pseudo-header fields first for HTTP/2).
    ///   - output: The buffer to append to.
    public mutating func encode(_ fields: [HPACKHeaderField], into output: inout [UInt8]) {
        if let update = pendingUpdate {
            if update.smallest < update.last {
                HPACKInteger.encode(update.smallest, prefixBits: 5, firstByte: 0x20, into: &output)
            }
            HPACKInteger.encode(update.last, prefixBits: 5, firstByte: 0x20, into: &output)
            pendingUpdate = nil
        }
        for field in fields {
            encode(field, into: &output)
        }
    }

    private mutating func encode(_ field: HPACKHeaderField, into output: inout [UInt8]) {
        let sensitive = field.indexing == .never || neverIndexedNames.contains(field.name)
        let indexes = !sensitive && field.indexing == .automatic && field.size <= table.maxSize
        let dynamic = table.find(name: field.name, value: field.value)
        let known = HPACKStaticTable.lookup(name: field.name, value: field.value)
        if !sensitive {
            if let index = known.field {
                HPACKInteger.encode(index, prefixBits: 7, firstByte: 0x80, into: &output)
                return
            }
            if let position = dynamic.field {
                HPACKInteger.encode(HPACKStaticTable.count + 1 + position, prefixBits: 7, firstByte: 0x80, into: &output)
                return
            }
        }
        let nameIndex = known.name
            ?? dynamic.name.map { HPACKStaticTable.count + 1 + $0 }
            ?? 0
        if sensitive {
            HPACKInteger.encode(nameIndex, prefixBits: 4, firstByte: 0x10, into: &output)
        } else if indexes {
            HPACKInteger.encode(nameIndex, prefixBits: 6, firstByte: 0x40, into: &output)
        } else {
            HPACKInteger.encode(nameIndex, prefixBits: 4, firstByte: 0x00, into: &output)
        }
        if nameIndex == 0 {
            HPACKString.encode(field.name, huffman: huffman, into: &output)
        }
        HPACKString.encode(field.value, huffman: huffman, into: &output)
        if indexes {
            table.insert(field)
        }
    }
}
