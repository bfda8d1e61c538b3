import Foundation

/// How a TLS client verifies the servers it talks to.
///
/// A configuration is a plain value: build one, then turn it into a
/// ``TLSContext`` once and share that context between all connections that use
/// the same settings (loading a trust store is expensive). Configurations are
/// `Hashable`, so a connection pool can key its contexts by configuration.
///
/// The defaults are the safe ones: the system trust store, TLS 1.2 or newer,
/// chain and host name verification on, no pins, and ALPN offering `http/1.1`.
public struct TLSConfiguration: Sendable, Hashable {
    /// Which certificate authorities are trusted to sign server certificates.
    public enum TrustRoots: Sendable, Hashable {
        /// The system trust store: OpenSSL's default verify paths (on Debian and
        /// Ubuntu `/etc/ssl/certs`), honouring `SSL_CERT_FILE` and `SSL_CERT_DIR`.
        case system
        /// Only the certificates in this PEM bundle (one or more
        /// `-----BEGIN CERTIFICATE-----` blocks); the system store is not used.
        case pem(Data)
        /// The system trust store plus the certificates in this PEM bundle.
        case systemPlus(pem: Data)
    }

    /// A pin on the server's leaf certificate.
    ///
    /// Pins are checked after a successful handshake (and after chain
    /// verification, when that is enabled). When a configuration has pins, at
    /// least one of them must match the leaf certificate or the session fails
    /// with ``TLSError/pinMismatch``.
    public enum CertificatePin: Sendable, Hashable {
        /// The SHA-256 digest (32 bytes) of the leaf certificate's DER encoding.
        case certificateSHA256(Data)
        /// The SHA-256 digest (32 bytes) of the leaf certificate's DER-encoded
        /// SubjectPublicKeyInfo (the HPKP / `openssl pkey -pubin -outform DER` form).
        /// Survives certificate renewal with the same key.
        case publicKeySHA256(Data)
    }

    /// The certificate authorities to trust. Default: ``TrustRoots/system``.
    public var trustRoots: TrustRoots
    /// The oldest protocol version to accept. Default: ``TLSVersion/tls1_2``.
    public var minimumVersion: TLSVersion
    /// Whether the server's certificate chain must verify against
    /// ``trustRoots`` (signatures, validity dates, usage). Default: `true`.
    ///
    /// Turning this off accepts any certificate; combine it with ``pins`` for
    /// a self-signed server rather than disabling all checks.
    public var verifyCertificate: Bool
    /// Whether the certificate must name the server (DNS name or IP address in
    /// its subjectAltName). Default: `true`.
    public var verifyHostname: Bool
    /// Pins on the leaf certificate; any match passes. Default: none.
    public var pins: [CertificatePin]
    /// The ALPN protocol names offered, in order of preference.
    /// Default: `["http/1.1"]`. An empty list sends no ALPN extension.
    public var applicationProtocols: [String]

    /// Creates a configuration.
    ///
    /// - Parameters:
    ///   - trustRoots: the trusted certificate authorities. Default: `.system`.
    ///   - minimumVersion: the oldest acceptable protocol version. Default: `.tls1_2`.
    ///   - verifyCertificate: verify the chain. Default: `true`.
    ///   - verifyHostname: verify the server's name. Default: `true`.
    ///   - pins: pins on the leaf certificate. Default: `[]`.
    ///   - applicationProtocols: the ALPN protocols to offer. Default: `["http/1.1"]`.
    public init(trustRoots: TrustRoots = .system,
                minimumVersion: TLSVersion = .tls1_2,
                verifyCertificate: Bool = true,
                verifyHostname: Bool = true,
                pins: [CertificatePin] = [],
                applicationProtocols: [String] = ["http/1.1"]) {
        self.trustRoots = trustRoots
        self.minimumVersion = minimumVersion
        self.verifyCertificate = verifyCertificate
        self.verifyHostname = verifyHostname
        self.pins = pins
        self.applicationProtocols = applicationProtocols
    }
}
