import Foundation

/// How numbers read in the tables.
enum Format {
    /// `12,345`.
    static func count(_ value: Int) -> String { value.formatted() }

    /// Requests per second, rounded to a whole number: `12,345`.
    static func rate(_ value: Double?) -> String {
        guard let value else { return "–" }
        return Int(value.rounded()).formatted()
    }

    /// A duration in the unit that suits it: `45 µs`, `1.23 ms`, `3.45 s`.
    static func duration(_ seconds: Double?) -> String {
        guard let seconds else { return "–" }
        switch seconds {
        case ..<1e-3: return String(format: "%.1f µs", seconds * 1e6)
        case ..<1: return String(format: "%.2f ms", seconds * 1e3)
        default: return String(format: "%.2f s", seconds)
        }
    }

    /// Memory in MiB: `12.3 MiB`.
    static func memory(kiB: Int?) -> String {
        guard let kiB else { return "–" }
        return String(format: "%.1f MiB", Double(kiB) / 1024)
    }

    /// A size in whole units where it has them: `4 GiB`, `100 MiB`, `1.5 GiB`.
    static func size(bytes: Int64) -> String {
        if bytes >= 1 << 30 {
            let gib = Double(bytes) / Double(1 << 30)
            return gib == gib.rounded() ? "\(Int(gib)) GiB" : String(format: "%.1f GiB", gib)
        }
        let mib = Double(bytes) / Double(1 << 20)
        return mib == mib.rounded() ? "\(Int(mib)) MiB" : String(format: "%.1f MiB", mib)
    }

    /// A rate of bytes: `1,234 MiB/s`.
    static func throughput(bytesPerSecond: Double?) -> String {
        guard let bytesPerSecond else { return "–" }
        return rate(bytesPerSecond / Double(1 << 20)) + " MiB/s"
    }

    /// A ratio: `0.52×`.
    static func ratio(_ value: Double?) -> String {
        guard let value, value.isFinite else { return "–" }
        return String(format: value < 10 ? "%.2f×" : "%.1f×", value)
    }

    /// A count per request, to one decimal: `3.2`.
    static func perRequest(_ value: Double?) -> String {
        guard let value, value.isFinite else { return "–" }
        return String(format: "%.1f", value)
    }

    /// A fraction as a percentage: `99.9 %`.
    static func percent(_ value: Double?) -> String {
        guard let value else { return "–" }
        return String(format: "%.1f %%", value * 100)
    }
}
