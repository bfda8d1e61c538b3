import CourierTLS
import Synchronization

/// Builds the transport's TLS context once, on the first `https` request, and shares it.
///
/// Loading a trust store is expensive, so it is not done for transports that never use TLS.
/// A configuration that cannot be used fails every `https` request: an unreadable PEM bundle
/// with ``HTTPConnectionError/tlsFailed``, a client identity whose key does not fit with
/// ``HTTPConnectionError/clientKeyMismatch`` or ``HTTPConnectionError/clientKeyPassphraseIncorrect``.
final class NativeTLSProvider: Sendable {
    private let options: TLSOptions
    private let applicationProtocols: [String]
    private let cached = Mutex<Result<TLSContext, HTTPConnectionError>?>(nil)

    /// A provider for `options`, offering `applicationProtocols` with ALPN (most preferred first).
    init(options: TLSOptions, applicationProtocols: [String]) {
        self.options = options
        self.applicationProtocols = applicationProtocols
    }

    /// The shared context.
    /// - Throws: ``HTTPConnectionError/tlsFailed`` (or a client-key kind) when the options cannot be used.
    func context() throws(HTTPConnectionError) -> TLSContext {
        let result = cached.withLock { cached -> Result<TLSContext, HTTPConnectionError> in
            if let cached { return cached }
            let made: Result<TLSContext, HTTPConnectionError>
            do throws(TLSError) {
                made = .success(try TLSContext(configuration: options.tlsConfiguration(applicationProtocols: applicationProtocols)))
            } catch {
                made = .failure(NativeErrors.tls(error).with(detail: "the TLS options cannot be used: \(error)"))
            }
            cached = made
            return made
        }
        return try result.get()
    }
}
