import Synchronization

/// Counts the live pools and connection objects of one ``NativeTransport``, so that tests and
/// diagnostics can prove that none outlives its transport (reliability case K1).
///
/// Pools and connections are loop-confined and never escape the transport, so weak references
/// to them cannot be taken from outside; they report their own births and deaths here instead.
/// The census is a separate object: it can be read after its transport was released.
final class NativeCensus: Sendable {
    private let pools = Atomic<Int>(0)
    private let connections = Atomic<Int>(0)

    /// Pools alive now.
    var livePools: Int { pools.load(ordering: .acquiring) }
    /// Connection objects alive now, open or closed but not yet freed.
    var liveConnections: Int { connections.load(ordering: .acquiring) }

    /// Records a pool's creation (`+1`) or release (`-1`).
    func pool(_ delta: Int) {
        pools.add(delta, ordering: .releasing)
    }

    /// Records a connection object's creation (`+1`) or release (`-1`).
    func connection(_ delta: Int) {
        connections.add(delta, ordering: .releasing)
    }
}
