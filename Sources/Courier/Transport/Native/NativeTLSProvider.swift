import CourierTLS
import Synchronization

/// Builds the transport's TLS context once, on the first `https` request, and shares it.
///
/// Loading a trust store is expensive, so it is not done for transports that never use TLS.
/// A configuration that cannot be used (an unreadable PEM bundle) fails every `https` request
/// with ``HTTPConnectionError/tlsFailed``.
final class NativeTLSProvider: Sendable {
    private let options: TLSOptions
    private let cached = Mutex<Result<TLSContext, HTTPConnectionError>?>(nil)

    init(options: TLSOptions) {
        self.options = options
    }

    /// The shared context.
    /// - Throws: ``HTTPConnectionError/tlsFailed`` when the options cannot be used.
    func context() throws(HTTPConnectionError) -> TLSContext {
        let result = cached.withLock { cached -> Result<TLSContext, HTTPConnectionError> in
            if let cached { return cached }
            let made: Result<TLSContext, HTTPConnectionError>
            do {
                made = .success(try TLSContext(configuration: options.tlsConfiguration))
            } catch {
                made = .failure(.tlsFailed.with(detail: "the TLS options cannot be used: \(error)", underlying: error))
            }
            cached = made
            return made
        }
        return try result.get()
    }
}
