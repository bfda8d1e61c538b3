/// Cached responses in memory, bounded by bytes, evicting the least recently used first.
struct MemoryCacheStore: Sendable {
    private struct Slot: Sendable {
        var variants: [CachedResponse]
        var bytes: Int
        var lastUse: UInt64
    }

    let capacity: Int
    private var slots: [String: Slot] = [:]
    private var clock: UInt64 = 0
    private(set) var totalBytes = 0

    init(capacity: Int) {
        self.capacity = capacity
    }

    mutating func variants(for key: String) -> [CachedResponse]? {
        guard var slot = slots[key] else { return nil }
        clock += 1
        slot.lastUse = clock
        slots[key] = slot
        return slot.variants
    }

    mutating func set(_ variants: [CachedResponse], for key: String) {
        remove(key)
        let bytes = variants.reduce(0) { $0 + $1.byteCount }
        guard bytes <= capacity else { return }
        clock += 1
        slots[key] = Slot(variants: variants, bytes: bytes, lastUse: clock)
        totalBytes += bytes
        while totalBytes > capacity, let oldest = slots.min(by: { $0.value.lastUse < $1.value.lastUse })?.key {
            remove(oldest)
        }
    }

    mutating func remove(_ key: String) {
        if let slot = slots.removeValue(forKey: key) { totalBytes -= slot.bytes }
    }

    mutating func removeAll() {
        slots.removeAll()
        totalBytes = 0
    }

    var keys: [String] { Array(slots.keys) }
}
