import CourierTLS
import Foundation

/// How Courier's native transport verifies the servers it talks to over `https`.
///
/// The defaults are the safe ones: the system trust store, TLS 1.2 or newer, certificate chain
/// and host name verification, and no pins. Every certificate failure ends a request with its
/// own ``HTTPConnectionError`` kind: ``HTTPConnectionError/untrustedCertificate``,
/// ``HTTPConnectionError/expiredCertificate``, ``HTTPConnectionError/hostnameMismatch`` or
/// ``HTTPConnectionError/pinMismatch``.
///
/// ```swift
/// let tls = TLSOptions(trustRoots: .systemPlus(pem: companyCA), pins: [.publicKeySHA256(pin)])
/// let transport = NativeTransport(configuration: .init(tls: tls))
/// ```
public struct TLSOptions: Sendable, Hashable {
    /// Which certificate authorities are trusted to sign server certificates.
    public enum TrustRoots: Sendable, Hashable {
        /// The system trust store (on Debian and Ubuntu `/etc/ssl/certs`), honouring
        /// `SSL_CERT_FILE` and `SSL_CERT_DIR`.
        case system
        /// Only the certificates in this PEM bundle (one or more `-----BEGIN CERTIFICATE-----`
        /// blocks); the system store is not used.
        case pem(Data)
        /// The system trust store plus the certificates in this PEM bundle.
        case systemPlus(pem: Data)
    }

    /// A pin on the server's leaf certificate. When pins are given, at least one must match or
    /// the request fails with ``HTTPConnectionError/pinMismatch``. A digest that is not exactly
    /// 32 bytes could never match: every `https` request then fails with
    /// ``HTTPConnectionError/tlsFailed``, naming the invalid configuration.
    public enum Pin: Sendable, Hashable {
        /// The SHA-256 digest (32 bytes) of the leaf certificate's DER encoding.
        case certificateSHA256(Data)
        /// The SHA-256 digest (32 bytes) of the leaf certificate's DER-encoded
        /// SubjectPublicKeyInfo; it survives a renewal with the same key.
        case publicKeySHA256(Data)
    }

    /// The oldest TLS version accepted. Versions older than 1.2 are never offered.
    public enum MinimumVersion: Sendable, Hashable {
        /// TLS 1.2 (the default).
        case tls1_2
        /// TLS 1.3.
        case tls1_3
    }

    /// The certificate authorities to trust. Default: ``TrustRoots/system``.
    public var trustRoots: TrustRoots
    /// Pins on the leaf certificate; any match passes. Default: none.
    public var pins: [Pin]
    /// The oldest protocol version to accept. Default: ``MinimumVersion/tls1_2``.
    public var minimumVersion: MinimumVersion
    /// Whether the certificate chain must verify against ``trustRoots``. Default: `true`.
    ///
    /// Turning it off accepts any certificate, and then a host name check proves nothing. So
    /// it is accepted only together with ``pins`` (a pinned self-signed server, OkHttp's way),
    /// or together with ``verifiesHostname`` off (any server at all, knowingly insecure, like
    /// curl's `-k`). Otherwise every `https` request fails with
    /// ``HTTPConnectionError/tlsFailed``, naming the invalid configuration. For a private CA,
    /// keep verification on and add the CA to ``trustRoots`` instead.
    public var verifiesCertificateChain: Bool
    /// Whether the certificate must name the host of the URL (in its subjectAltName; the
    /// subject's common name is never consulted). Default: `true`.
    public var verifiesHostname: Bool
    /// Whether TLS sessions are resumed: the sessions a server issues (TLS 1.3 tickets, TLS 1.2
    /// session ids) are kept per host and port, for as long as the server allows and at most
    /// 256 in all, and offered on the next connection to that host and port, whose handshake
    /// then skips the certificate. Sessions are kept per transport configuration, so they are
    /// never offered under other trust roots, pins or checks; the pins and the host name are
    /// checked on a resumed session too, against the certificate of the handshake that created
    /// it. A server that refused two offered sessions in a row (one that issues tickets it cannot
    /// resume) is offered none, and its sessions are not kept, for a minute. Default: `true`.
    public var resumesSessions: Bool
    /// The certificate and key to present when a server asks for a client certificate
    /// (mutual TLS); `nil` presents none. Default: `nil`.
    ///
    /// A server that requires one fails the request with
    /// ``HTTPConnectionError/clientCertificateRequired`` when this is `nil`, and one that refuses
    /// it with ``HTTPConnectionError/clientCertificateRejected`` (some servers, nginx among
    /// them, finish the handshake instead and answer with an HTTP `400`).
    public var clientIdentity: ClientIdentity?

    /// Creates TLS options.
    /// - Parameters:
    ///   - trustRoots: the trusted certificate authorities. Default: `.system`.
    ///   - pins: pins on the leaf certificate. Default: `[]`.
    ///   - minimumVersion: the oldest acceptable version. Default: `.tls1_2`.
    ///   - verifiesCertificateChain: verify the chain. Default: `true`.
    ///   - verifiesHostname: verify the host name. Default: `true`.
    ///   - resumesSessions: keep and resume TLS sessions. Default: `true`.
    ///   - clientIdentity: the client certificate for mutual TLS. Default: `nil`.
    public init(trustRoots: TrustRoots = .system, pins: [Pin] = [], minimumVersion: MinimumVersion = .tls1_2,
                verifiesCertificateChain: Bool = true, verifiesHostname: Bool = true, resumesSessions: Bool = true,
                clientIdentity: ClientIdentity? = nil) {
        self.trustRoots = trustRoots
        self.pins = pins
        self.minimumVersion = minimumVersion
        self.verifiesCertificateChain = verifiesCertificateChain
        self.verifiesHostname = verifiesHostname
        self.resumesSessions = resumesSessions
        self.clientIdentity = clientIdentity
    }

    /// The same settings in CourierTLS's terms, offering `applicationProtocols` with ALPN.
    func tlsConfiguration(applicationProtocols: [String]) -> TLSConfiguration {
        let roots: TLSConfiguration.TrustRoots = switch trustRoots {
        case .system: .system
        case .pem(let pem): .pem(pem)
        case .systemPlus(let pem): .systemPlus(pem: pem)
        }
        let pins = pins.map { pin -> TLSConfiguration.CertificatePin in
            switch pin {
            case .certificateSHA256(let digest): .certificateSHA256(digest)
            case .publicKeySHA256(let digest): .publicKeySHA256(digest)
            }
        }
        return TLSConfiguration(trustRoots: roots,
                                minimumVersion: minimumVersion == .tls1_3 ? .tls1_3 : .tls1_2,
                                verifyCertificate: verifiesCertificateChain,
                                verifyHostname: verifiesHostname,
                                pins: pins,
                                applicationProtocols: applicationProtocols,
                                resumesSessions: resumesSessions,
                                clientIdentity: clientIdentity?.identity)
    }
}
