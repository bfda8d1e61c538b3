import COpenSSL
import Foundation

/// A configured OpenSSL client context (`SSL_CTX`), shared by many sessions.
///
/// Creating a context loads the trust store and validates the configuration,
/// which is comparatively expensive; do it once per ``TLSConfiguration`` and
/// create a cheap ``TLSClientSession`` from it for every connection.
///
/// A context is immutable after `init` and may be used from any thread.
///
/// Settings applied to every session: TLS 1.2 or the configured minimum,
/// OpenSSL's default TLS 1.2 cipher list and security level, OpenSSL's three
/// TLS 1.3 AEAD suites with AES-128-GCM offered first, no TLS compression, no
/// TLS 1.2 renegotiation, peer verification per the configuration, ALPN, the
/// client identity (certificate chain and key) when the configuration has one, and
/// `SSL_MODE_RELEASE_BUFFERS` (idle pooled connections release their record
/// buffers).
///
/// Unless ``TLSConfiguration/resumesSessions`` is off, the context keeps the
/// sessions its servers issue (TLS 1.3 tickets, TLS 1.2 session ids) in a
/// cache of its own, per host and port, and a new session to the same peer
/// offers one: the resumed handshake skips the server's certificate and the
/// key exchange's signature. Sessions never leave the context, so they are
/// never offered under other trust roots, pins or verification settings.
///
/// With chain verification on, the context also keeps the chains it verified
/// (``VerifiedChainCache``, at most 64 for up to 10 minutes each, and only
/// while every certificate of the chain is valid): a new connection whose
/// server presents the same certificates for the same name skips rebuilding
/// and re-checking the chain. The server's proof that it holds the
/// certificate's key, and the pins, are still checked on every connection.
public final class TLSContext: Sendable {
    /// The configuration this context was built from.
    public let configuration: TLSConfiguration

    /// The `SSL_CTX`, owned by this object.
    ///
    /// `nonisolated(unsafe)` because raw pointers are not `Sendable`; sharing
    /// this one is safe: the SSL_CTX is fully configured in `init` and never
    /// modified afterwards, and OpenSSL documents a context that is no longer
    /// being changed (including its X509_STORE, which has its own lock) as
    /// safe to use from many threads to create connections.
    nonisolated(unsafe) let context: OpaquePointer

    /// The sessions this context may resume; `nil` when resumption is off.
    let sessionCache: TLSSessionCache?

    /// The chains this context verified; `nil` when chain verification is off.
    let verifiedChains: VerifiedChainCache?

    /// Builds a context.
    ///
    /// - Parameter configuration: the settings for every session created from this context.
    /// - Throws: ``TLSError/invalidConfiguration`` if the configuration fails
    ///   ``TLSConfiguration/validate()``, a PEM bundle holds no readable
    ///   certificate, or an ALPN protocol name is empty or longer than 255 bytes;
    ///   ``TLSError/clientKeyMismatch`` or ``TLSError/clientKeyPassphraseIncorrect``
    ///   for a ``TLSConfiguration/clientIdentity`` that cannot be used;
    ///   ``TLSError/internalError`` if OpenSSL cannot create the context.
    public init(configuration: TLSConfiguration) throws(TLSError) {
        try configuration.validate()
        ERR_clear_error()
        guard let method = TLS_client_method(), let context = SSL_CTX_new(method) else {
            throw TLSError.internalError.with(detail: "SSL_CTX_new failed: \(OpenSSL.drainErrorQueue())")
        }
        do {
            try Self.configure(context, with: configuration)
        } catch {
            SSL_CTX_free(context)
            throw error
        }
        self.configuration = configuration
        self.context = context
        self.sessionCache = configuration.resumesSessions ? TLSSessionCache() : nil
        self.verifiedChains = configuration.verifyCertificate ? VerifiedChainCache() : nil
        if configuration.resumesSessions {
            // Client-side caching only calls the callback; the cache is ours, not OpenSSL's.
            OpenSSL.setSessionCacheMode(context, SSL_SESS_CACHE_CLIENT | SSL_SESS_CACHE_NO_INTERNAL_STORE | SSL_SESS_CACHE_NO_INTERNAL_LOOKUP)
            SSL_CTX_sess_set_new_cb(context, TLSClientSession.sessionIssuedCallback)
        } else {
            OpenSSL.setSessionCacheMode(context, SSL_SESS_CACHE_OFF)
        }
    }

    deinit {
        SSL_CTX_free(context)
    }

    private static func configure(_ context: OpaquePointer,
                                  with configuration: TLSConfiguration) throws(TLSError) {
        guard OpenSSL.setMinimumProtocolVersion(context, configuration.minimumVersion.openSSLValue) else {
            throw TLSError.internalError.with(
                detail: "cannot set the minimum protocol version: \(OpenSSL.drainErrorQueue())")
        }
        _ = SSL_CTX_set_options(context, courier_ssl_op_no_compression() | courier_ssl_op_no_renegotiation())
        guard SSL_CTX_set_ciphersuites(context, tls13CipherSuites) == 1 else {
            throw TLSError.internalError.with(
                detail: "cannot set the TLS 1.3 cipher suites: \(OpenSSL.drainErrorQueue())")
        }
        OpenSSL.addMode(context, UInt32(SSL_MODE_RELEASE_BUFFERS))

        // The verification callback's answer aborts the handshake only with
        // SSL_VERIFY_PEER. It answers for the chain (which also covers the host
        // name, set per session) and for the session's own checks (pins, and the
        // host name when the chain is not verified), so that a server failing
        // any of them never receives the client's certificate. With nothing to
        // check (curl's -k), SSL_VERIFY_NONE.
        let checksServer = configuration.verifyCertificate || configuration.verifyHostname || !configuration.pins.isEmpty
        SSL_CTX_set_verify(context, checksServer ? SSL_VERIFY_PEER : SSL_VERIFY_NONE, nil)
        // The session verifies the chain, or finds it verified already (VerifiedChainCache).
        SSL_CTX_set_cert_verify_callback(context, TLSClientSession.chainVerificationCallback, nil)

        switch configuration.trustRoots {
        case .system:
            try loadSystemTrustRoots(into: context)
        case .pem(let pem):
            try loadTrustRoots(pem: pem, into: context)
        case .systemPlus(let pem):
            try loadSystemTrustRoots(into: context)
            try loadTrustRoots(pem: pem, into: context)
        }

        if let identity = configuration.clientIdentity {
            // The context keeps references of its own; the parsed copies go when this returns.
            try TLSClientCredentials(identity).install(into: context)
        }
        SSL_CTX_set_cert_cb(context, TLSClientSession.certificateRequestedCallback, nil)

        if !configuration.applicationProtocols.isEmpty {
            let wire = try alpnWireFormat(configuration.applicationProtocols)
            let failed = wire.withUnsafeBufferPointer { buffer in
                // Unlike most OpenSSL calls, this one returns 0 on success.
                SSL_CTX_set_alpn_protos(context, buffer.baseAddress, UInt32(buffer.count)) != 0
            }
            if failed {
                throw TLSError.internalError.with(detail: "cannot set ALPN: \(OpenSSL.drainErrorQueue())")
            }
        }
    }

    /// The TLS 1.3 cipher suites offered, most preferred first: OpenSSL's
    /// default three AEAD suites, with AES-128-GCM first instead of
    /// AES-256-GCM. Its SHA-256 transcript hash and key schedule cost less per
    /// handshake than SHA-384's, and it is what BoringSSL, browsers and
    /// AsyncHTTPClient offer first. A server that prefers another of the three
    /// still gets it.
    static let tls13CipherSuites = "TLS_AES_128_GCM_SHA256:TLS_AES_256_GCM_SHA384:TLS_CHACHA20_POLY1305_SHA256"

    private static func loadSystemTrustRoots(into context: OpaquePointer) throws(TLSError) {
        guard SSL_CTX_set_default_verify_paths(context) == 1 else {
            throw TLSError.invalidConfiguration.with(
                detail: "cannot load the system trust store: \(OpenSSL.drainErrorQueue())")
        }
    }

    /// Adds every certificate of a PEM bundle to the context's trust store.
    private static func loadTrustRoots(pem: Data, into context: OpaquePointer) throws(TLSError) {
        guard let store = SSL_CTX_get_cert_store(context) else {
            throw TLSError.internalError.with(detail: "the context has no certificate store")
        }
        let certificates = try PEMCertificates.read(pem, what: "the PEM trust bundle")
        defer { certificates.forEach { X509_free($0) } }
        for certificate in certificates {
            ERR_clear_error()
            // Adding the same certificate twice is harmless; anything else is not.
            if X509_STORE_add_cert(store, certificate) != 1
                && ERR_GET_REASON(ERR_peek_last_error()) != X509_R_CERT_ALREADY_IN_HASH_TABLE {
                throw TLSError.invalidConfiguration.with(
                    detail: "cannot add a trusted certificate: \(OpenSSL.drainErrorQueue())")
            }
        }
        ERR_clear_error()
    }

    /// Encodes ALPN protocol names as length-prefixed strings (RFC 7301 §3.1).
    private static func alpnWireFormat(_ protocols: [String]) throws(TLSError) -> [UInt8] {
        var wire: [UInt8] = []
        for name in protocols {
            let bytes = Array(name.utf8)
            guard (1...255).contains(bytes.count) else {
                throw TLSError.invalidConfiguration.with(
                    detail: "ALPN protocol names must be 1 to 255 bytes long, got \(bytes.count)")
            }
            wire.append(UInt8(bytes.count))
            wire.append(contentsOf: bytes)
        }
        guard wire.count <= 0xFFFF else {
            throw TLSError.invalidConfiguration.with(detail: "the ALPN protocol list is too long")
        }
        return wire
    }
}
