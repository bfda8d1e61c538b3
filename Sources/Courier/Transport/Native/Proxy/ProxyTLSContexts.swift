import CourierTLS
import Synchronization

/// The TLS contexts of a transport's `https://` proxies, one per distinct ``Proxy/tls`` options,
/// built on first use and shared by every connection to such a proxy (loading a trust store is
/// expensive).
final class ProxyTLSContexts: Sendable {
    private let contexts = Mutex<[TLSOptions: Result<TLSContext, HTTPConnectionError>]>([:])

    /// The context for `proxy`'s TLS options; ALPN offers `http/1.1` alone, the protocol spoken to a proxy.
    /// - Throws: ``HTTPConnectionError/proxyTLSFailed`` when the options cannot be used.
    func context(for proxy: Proxy) throws(HTTPConnectionError) -> TLSContext {
        let result = contexts.withLock { contexts -> Result<TLSContext, HTTPConnectionError> in
            if let known = contexts[proxy.tls] { return known }
            let made: Result<TLSContext, HTTPConnectionError>
            do throws(TLSError) {
                made = .success(try TLSContext(configuration: proxy.tls.tlsConfiguration(applicationProtocols: ["http/1.1"])))
            } catch {
                made = .failure(.proxyTLSFailed.with(detail: "the TLS options of \(proxy) cannot be used: \(error)", underlying: error))
            }
            contexts[proxy.tls] = made
            return made
        }
        return try result.get()
    }
}
