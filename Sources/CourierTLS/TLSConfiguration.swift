import Foundation

/// How a TLS client verifies the servers it talks to.
///
/// A configuration is a plain value: build one, then turn it into a
/// ``TLSContext`` once and share that context between all connections that use
/// the same settings (loading a trust store is expensive). Configurations are
/// `Hashable`, so a connection pool can key its contexts by configuration.
///
/// The defaults are the safe ones: the system trust store, TLS 1.2 or newer,
/// chain and host name verification on, no pins, and ALPN offering `http/1.1`;
/// sessions are resumed.
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
    /// with ``TLSError/pinMismatch``. A pin whose digest is not exactly 32 bytes
    /// could never match: ``TLSContext`` refuses it with
    /// ``TLSError/invalidConfiguration``.
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
    /// Turning this off accepts any certificate, so the host name check alone
    /// proves nothing (anyone can make a certificate naming any host). Only two
    /// combinations are accepted, and ``TLSContext`` refuses the others with
    /// ``TLSError/invalidConfiguration``:
    /// - chain verification off with ``pins``: a self-signed server you pinned
    ///   (OkHttp's way);
    /// - chain verification *and* ``verifyHostname`` off: any server at all,
    ///   knowingly insecure (curl's `-k`).
    public var verifyCertificate: Bool
    /// Whether the certificate must name the server (a DNS name or IP address in
    /// its subjectAltName; the subject's common name is never consulted).
    /// Default: `true`.
    public var verifyHostname: Bool
    /// Pins on the leaf certificate; any match passes. Default: none.
    public var pins: [CertificatePin]
    /// The ALPN protocol names offered, in order of preference.
    /// Default: `["http/1.1"]`. An empty list sends no ALPN extension.
    public var applicationProtocols: [String]
    /// Whether sessions the server issues (TLS 1.3 tickets, TLS 1.2 session ids)
    /// are kept and offered again on the next connection to the same host and
    /// port, which makes that handshake much cheaper. The pins and the host name
    /// are still checked on a resumed session, against the certificate of the
    /// handshake that created it. Default: `true`.
    public var resumesSessions: Bool
    /// The certificate and key presented when a server asks for a client certificate
    /// (mutual TLS); `nil` sends none. Default: `nil`.
    ///
    /// A context holds one identity, and its sessions were made with it, so a session is
    /// never resumed under another identity.
    public var clientIdentity: TLSClientIdentity?

    /// Creates a configuration.
    ///
    /// - Parameters:
    ///   - trustRoots: the trusted certificate authorities. Default: `.system`.
    ///   - minimumVersion: the oldest acceptable protocol version. Default: `.tls1_2`.
    ///   - verifyCertificate: verify the chain. Default: `true`.
    ///   - verifyHostname: verify the server's name. Default: `true`.
    ///   - pins: pins on the leaf certificate. Default: `[]`.
    ///   - applicationProtocols: the ALPN protocols to offer. Default: `["http/1.1"]`.
    ///   - resumesSessions: keep and resume sessions. Default: `true`.
    ///   - clientIdentity: the client certificate and key for mutual TLS. Default: `nil`.
    public init(trustRoots: TrustRoots = .system,
                minimumVersion: TLSVersion = .tls1_2,
                verifyCertificate: Bool = true,
                verifyHostname: Bool = true,
                pins: [CertificatePin] = [],
                applicationProtocols: [String] = ["http/1.1"],
                resumesSessions: Bool = true,
                clientIdentity: TLSClientIdentity? = nil) {
        self.trustRoots = trustRoots
        self.minimumVersion = minimumVersion
        self.verifyCertificate = verifyCertificate
        self.verifyHostname = verifyHostname
        self.pins = pins
        self.applicationProtocols = applicationProtocols
        self.resumesSessions = resumesSessions
        self.clientIdentity = clientIdentity
    }

    /// The length of a SHA-256 digest, the only length a pin can have.
    public static let pinLength = 32

    /// Checks the combinations that cannot give the protection they appear to.
    ///
    /// - Throws: ``TLSError/invalidConfiguration`` when a pin's digest is not
    ///   ``pinLength`` bytes, or when chain verification is off without pins
    ///   while the host name check is still on (that check would trust any
    ///   self-made certificate naming the host).
    public func validate() throws(TLSError) {
        for pin in pins {
            let digest = switch pin {
            case .certificateSHA256(let digest), .publicKeySHA256(let digest): digest
            }
            guard digest.count == Self.pinLength else {
                throw TLSError.invalidConfiguration.with(
                    detail: "a pin must be a \(Self.pinLength)-byte SHA-256 digest, got \(digest.count) bytes")
            }
        }
        if !verifyCertificate && verifyHostname && pins.isEmpty {
            throw TLSError.invalidConfiguration.with(
                detail: "chain verification is off and there are no pins, so any certificate naming the host "
                    + "would pass: add pins, or also turn off host name verification to accept any server knowingly")
        }
    }
}
