/// Order statistics over measured samples.
enum Statistics {
    /// The median of `values`, or `nil` when there are none.
    static func median(_ values: [Double]) -> Double? {
        guard !values.isEmpty else { return nil }
        let sorted = values.sorted()
        let middle = sorted.count / 2
        return sorted.count.isMultiple(of: 2) ? (sorted[middle - 1] + sorted[middle]) / 2 : sorted[middle]
    }

    /// The `fraction` percentile (0...1) of already sorted `values`, nearest rank; `nil` when empty.
    static func percentile(_ fraction: Double, ofSorted values: [UInt64]) -> UInt64? {
        guard !values.isEmpty else { return nil }
        let rank = Int((fraction * Double(values.count)).rounded(.up)) - 1
        return values[min(max(rank, 0), values.count - 1)]
    }
}
