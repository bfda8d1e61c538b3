import Foundation

/// A small, fast random number generator (SplitMix64) whose whole sequence follows from its seed,
/// so that a randomized test that fails can be replayed exactly.
///
/// Randomized tests take their seed from ``SeededRandom/seed(default:)`` and name it in every
/// expectation message; running them again with `COURIER_TEST_SEED=<seed>` replays the failing input.
public struct SeededRandom: RandomNumberGenerator, Sendable {
    /// The seed this generator started from.
    public let seed: UInt64
    private var state: UInt64

    /// A generator whose sequence is fixed by `seed`.
    public init(seed: UInt64) {
        self.seed = seed
        state = seed
    }

    /// Generator number `stream` of a test seeded with `seed`, for a test that plays many
    /// conversations: its seed is `seed` and `stream` mixed, so that two streams are not shifted
    /// copies of one sequence (as `seed + stream × 0x9E3779B97F4A7C15`, this generator's own
    /// step, would make them).
    public init(seed: UInt64, stream: Int) {
        var mixer = SeededRandom(seed: seed ^ (UInt64(truncatingIfNeeded: stream) &* 0xD1B5_4A32_D192_ED03))
        self.init(seed: mixer.next())
    }

    /// The next 64 random bits.
    public mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var value = state
        value = (value ^ (value >> 30)) &* 0xBF58_476D_1CE4_E5B9
        value = (value ^ (value >> 27)) &* 0x94D0_49BB_1331_11EB
        return value ^ (value >> 31)
    }

    /// The environment variable that replays a randomized test: its value (decimal, or hex with `0x`)
    /// replaces the seed of every randomized test in the process.
    public static let environmentVariable = "COURIER_TEST_SEED"

    /// The seed a randomized test should use: `COURIER_TEST_SEED` when it is set, otherwise `default`,
    /// or a fresh random seed when `default` is nil (so that every run explores new input).
    public static func seed(default fixed: UInt64? = nil) -> UInt64 {
        if let text = ProcessInfo.processInfo.environment[environmentVariable], let value = parse(text) {
            return value
        }
        return fixed ?? UInt64.random(in: .min ... .max)
    }

    /// A generator seeded by ``seed(default:)``.
    public static func forTest(default fixed: UInt64? = nil) -> SeededRandom {
        SeededRandom(seed: seed(default: fixed))
    }

    /// How a test names its seed in a failure message: `seed 0x… (replay with COURIER_TEST_SEED=0x…)`.
    public var replayHint: String {
        let hex = "0x" + String(seed, radix: 16)
        return "seed \(hex) (replay with \(Self.environmentVariable)=\(hex))"
    }

    private static func parse(_ text: String) -> UInt64? {
        let trimmed = text.trimmingCharacters(in: .whitespaces)
        if trimmed.lowercased().hasPrefix("0x") { return UInt64(trimmed.dropFirst(2), radix: 16) }
        return UInt64(trimmed)
    }
}
