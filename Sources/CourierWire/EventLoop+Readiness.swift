#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

extension EventLoop {
    /// The readiness a registered descriptor is watched for.
    ///
    /// Errors and hang-ups are always reported, whatever the interest.
    /// Notifications are level-triggered: a readable descriptor is reported again
    /// on every loop iteration until it has been drained or the interest changed.
    public struct Interest: OptionSet, Sendable, Hashable {
        /// The raw bit set.
        public let rawValue: UInt8

        /// Creates an interest from raw bits.
        ///
        /// - Parameter rawValue: The bits.
        public init(rawValue: UInt8) { self.rawValue = rawValue }

        /// Report when data can be read (or the peer closed its side, or a listener has a connection).
        public static let readable = Interest(rawValue: 1 << 0)
        /// Report when data can be written (or a non-blocking connect finished).
        public static let writable = Interest(rawValue: 1 << 1)
        /// Nothing but errors and hang-ups.
        public static let none: Interest = []

        var epollEvents: UInt32 {
            var events: UInt32 = 0
            if contains(.readable) { events |= LinuxAPI.epollIn }
            if contains(.writable) { events |= LinuxAPI.epollOut }
            return events
        }
    }

    /// What a descriptor is ready for, as passed to a registration's handler.
    public struct Readiness: OptionSet, Sendable, Hashable, CustomStringConvertible {
        /// The raw bit set.
        public let rawValue: UInt8

        /// Creates a readiness value from raw bits.
        ///
        /// - Parameter rawValue: The bits.
        public init(rawValue: UInt8) { self.rawValue = rawValue }

        /// Data (or end of stream) can be read; a listener has a pending connection.
        public static let readable = Readiness(rawValue: 1 << 0)
        /// Data can be written; a pending connect has finished (check its result).
        public static let writable = Readiness(rawValue: 1 << 1)
        /// The connection hung up (`EPOLLHUP`): both directions are closed.
        public static let hangup = Readiness(rawValue: 1 << 2)
        /// The descriptor has a pending error (`EPOLLERR`); a read or write will report it.
        public static let error = Readiness(rawValue: 1 << 3)

        init(epollEvents events: UInt32) {
            var value: Readiness = []
            if events & (LinuxAPI.epollIn | LinuxAPI.epollPri) != 0 { value.insert(.readable) }
            if events & LinuxAPI.epollOut != 0 { value.insert(.writable) }
            if events & LinuxAPI.epollHup != 0 { value.insert(.hangup) }
            if events & LinuxAPI.epollErr != 0 { value.insert(.error) }
            self = value
        }

        /// `"[readable, writable]"` and so on.
        public var description: String {
            var names: [String] = []
            if contains(.readable) { names.append("readable") }
            if contains(.writable) { names.append("writable") }
            if contains(.hangup) { names.append("hangup") }
            if contains(.error) { names.append("error") }
            return "[" + names.joined(separator: ", ") + "]"
        }
    }
}
