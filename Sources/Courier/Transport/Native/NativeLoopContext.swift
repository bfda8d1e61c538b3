import CourierWire

/// What the native transport keeps per event loop: the read buffers shared by all of the loop's
/// connections, and the loop's pools (to close them at shutdown).
///
/// Loop-confined (reached through a ``LoopBound``). Sharing one read buffer per loop is safe
/// because a connection consumes every byte it reads before returning to the loop: the head
/// parser keeps its own copy of an incomplete head, and body bytes go straight to the exchange.
final class NativeLoopContext {
    /// The size of the socket read buffer.
    static let readBufferSize = 256 * 1024
    /// The size of the TLS plaintext buffer (one TLS record is at most 16 KiB).
    static let plainBufferSize = 32 * 1024

    /// Receives bytes from sockets.
    let readBuffer: UnsafeMutableRawBufferPointer
    /// Receives decrypted TLS records.
    let plainBuffer: UnsafeMutableRawBufferPointer
    /// The pools living on this loop.
    var pools: [HostPool] = []
    /// Whether the transport was shut down.
    private(set) var isShutDown = false

    init() {
        readBuffer = .allocate(byteCount: Self.readBufferSize, alignment: 16)
        plainBuffer = .allocate(byteCount: Self.plainBufferSize, alignment: 16)
    }

    deinit {
        readBuffer.deallocate()
        plainBuffer.deallocate()
    }

    /// Closes every pool: their exchanges fail with a shutdown error, their sockets close.
    func shutDown() {
        isShutDown = true
        let all = pools
        pools = []
        for pool in all { pool.closeAll() }
    }
}
