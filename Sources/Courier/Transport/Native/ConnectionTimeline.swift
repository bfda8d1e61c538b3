/// When one connection of the native transport went through the phases of being opened, on the
/// monotonic clock (`EventLoop.now()`, nanoseconds).
///
/// The connection records each moment as it happens; an exchange that runs on the connection
/// first copies the record into its ``ExchangeTimeline``. A phase the connection skipped keeps
/// `nil`: no resolution for a numeric address, no handshake for `http`.
struct ConnectionTimeline: Equatable {
    /// Name resolution began.
    var resolveStart: UInt64?
    /// Name resolution answered.
    var resolveEnd: UInt64?
    /// The first TCP connect began.
    var connectStart: UInt64?
    /// A TCP connect succeeded (after every address tried before it failed).
    var connectEnd: UInt64?
    /// The TLS handshake began.
    var handshakeStart: UInt64?
    /// The TLS handshake finished.
    var handshakeEnd: UInt64?
}
