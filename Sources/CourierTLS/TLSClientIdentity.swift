import COpenSSL
import Foundation

/// A client certificate chain and its private key, presented to servers that ask for one
/// (mutual TLS).
///
/// Both halves are PEM: the chain is the client certificate followed by any intermediate
/// certificates (`-----BEGIN CERTIFICATE-----` blocks); the key is one private key block
/// (PKCS #8 `PRIVATE KEY` or `ENCRYPTED PRIVATE KEY`, or a traditional `EC PRIVATE KEY` /
/// `RSA PRIVATE KEY`, possibly encrypted). An encrypted key needs its ``passphrase``.
///
/// An identity is a plain value that holds the key material; nothing in it is ever printed:
/// ``description``, `debugDescription` and `dump` show only the sizes, and no error carries
/// key bytes or the passphrase.
public struct TLSClientIdentity: Sendable, Hashable, CustomStringConvertible,
    CustomDebugStringConvertible, CustomReflectable {
    /// The PEM certificate chain, leaf first.
    public let certificateChainPEM: Data
    /// The PEM private key of the leaf certificate.
    public let privateKeyPEM: Data
    /// The passphrase of an encrypted private key; `nil` for a plain key.
    public let passphrase: String?

    /// Creates an identity from PEM data. Nothing is parsed yet: ``validate()`` or a
    /// ``TLSContext`` does that.
    ///
    /// - Parameters:
    ///   - certificateChainPEM: the client certificate, then any intermediates.
    ///   - privateKeyPEM: the client certificate's private key.
    ///   - passphrase: the passphrase of an encrypted key. Default: `nil`.
    public init(certificateChainPEM: Data, privateKeyPEM: Data, passphrase: String? = nil) {
        self.certificateChainPEM = certificateChainPEM
        self.privateKeyPEM = privateKeyPEM
        self.passphrase = passphrase
    }

    /// Creates an identity from PEM files, read now.
    ///
    /// - Parameters:
    ///   - certificateChainFile: the path of the PEM certificate chain.
    ///   - privateKeyFile: the path of the PEM private key (may be the same file).
    ///   - passphrase: the passphrase of an encrypted key. Default: `nil`.
    /// - Throws: ``TLSError/invalidConfiguration`` when a file cannot be read.
    public init(certificateChainFile: String, privateKeyFile: String, passphrase: String? = nil) throws(TLSError) {
        self.init(certificateChainPEM: try Self.contents(of: certificateChainFile, what: "client certificate chain"),
                  privateKeyPEM: try Self.contents(of: privateKeyFile, what: "client private key"),
                  passphrase: passphrase)
    }

    /// Parses both halves and checks that they belong together, as a ``TLSContext`` will.
    ///
    /// - Throws: ``TLSError/invalidConfiguration`` for unreadable PEM,
    ///   ``TLSError/clientKeyPassphraseIncorrect`` for an encrypted key without the right
    ///   passphrase, ``TLSError/clientKeyMismatch`` when the key is not the leaf's.
    public func validate() throws(TLSError) {
        _ = try TLSClientCredentials(self)
    }

    /// The sizes of the two halves; never the key or the passphrase.
    public var description: String {
        "TLSClientIdentity(certificate chain: \(certificateChainPEM.count) bytes, private key: redacted"
            + (passphrase == nil ? ")" : ", passphrase: redacted)")
    }

    /// The same as ``description``.
    public var debugDescription: String { description }

    /// No children: `dump` and mirrors show ``description`` only.
    public var customMirror: Mirror {
        Mirror(self, children: [], displayStyle: .struct)
    }

    private static func contents(of path: String, what: String) throws(TLSError) -> Data {
        guard let data = FileManager.default.contents(atPath: path) else {
            throw TLSError.invalidConfiguration.with(detail: "cannot read the \(what) file \(path)")
        }
        return data
    }
}

/// A parsed ``TLSClientIdentity``: the chain's `X509` objects and the `EVP_PKEY`, owned here.
final class TLSClientCredentials {
    /// The certificates, leaf first; never empty.
    let certificates: [OpaquePointer]
    /// The private key of the leaf.
    let key: OpaquePointer

    /// Parses an identity and checks that its key belongs to its leaf certificate.
    ///
    /// - Throws: see ``TLSClientIdentity/validate()``.
    init(_ identity: TLSClientIdentity) throws(TLSError) {
        let certificates = try PEMCertificates.read(identity.certificateChainPEM, what: "the client certificate chain")
        let key: OpaquePointer
        do {
            key = try Self.readKey(identity.privateKeyPEM, passphrase: identity.passphrase)
        } catch {
            certificates.forEach { X509_free($0) }
            throw error
        }
        self.certificates = certificates
        self.key = key
        ERR_clear_error()
        guard X509_check_private_key(certificates[0], key) == 1 else {
            ERR_clear_error()
            throw TLSError.clientKeyMismatch.with(
                detail: "the private key is not the key of the first certificate of the chain")
        }
    }

    deinit {
        certificates.forEach { X509_free($0) }
        EVP_PKEY_free(key)
    }

    /// Makes the context present this identity when a server asks for a certificate.
    ///
    /// - Throws: ``TLSError/internalError`` when OpenSSL refuses a part,
    ///   ``TLSError/clientKeyMismatch`` if OpenSSL's own check disagrees.
    func install(into context: OpaquePointer) throws(TLSError) {
        ERR_clear_error()
        guard SSL_CTX_use_certificate(context, certificates[0]) == 1 else {
            throw TLSError.internalError.with(detail: "cannot use the client certificate: \(OpenSSL.drainErrorQueue())")
        }
        for intermediate in certificates.dropFirst() where !OpenSSL.addChainCertificate(context, intermediate) {
            throw TLSError.internalError.with(
                detail: "cannot add an intermediate certificate: \(OpenSSL.drainErrorQueue())")
        }
        guard SSL_CTX_use_PrivateKey(context, key) == 1, SSL_CTX_check_private_key(context) == 1 else {
            let queue = OpenSSL.drainErrorQueue()
            throw TLSError.clientKeyMismatch.with(detail: "OpenSSL refused the private key: \(queue)")
        }
    }

    /// Reads one private key; an encrypted key is decrypted with the passphrase.
    private static func readKey(_ pem: Data, passphrase: String?) throws(TLSError) -> OpaquePointer {
        guard !pem.isEmpty, pem.count <= Int(Int32.max) else {
            throw TLSError.invalidConfiguration.with(detail: "the client private key is empty or too large")
        }
        if let passphrase, passphrase.utf8.contains(0) {
            throw TLSError.invalidConfiguration.with(detail: "the passphrase contains a NUL byte")
        }
        ERR_clear_error()
        let key: OpaquePointer? = pem.withUnsafeBytes { bytes in
            guard let bio = BIO_new_mem_buf(bytes.baseAddress, Int32(bytes.count)) else { return nil }
            defer { BIO_free(bio) }
            // Always our callback: OpenSSL's default one would prompt on the terminal.
            guard let passphrase else { return PEM_read_bio_PrivateKey(bio, nil, noPassphrase, nil) }
            return passphrase.withCString { text in
                PEM_read_bio_PrivateKey(bio, nil, givenPassphrase, UnsafeMutableRawPointer(mutating: text))
            }
        }
        // OpenSSL's error queue names reasons only, never key bytes or the passphrase.
        let queue = OpenSSL.drainErrorQueue()
        if let key { return key }
        if isEncrypted(pem) {
            throw TLSError.clientKeyPassphraseIncorrect.with(detail: passphrase == nil
                ? "the private key is encrypted and no passphrase was given"
                : "the passphrase does not decrypt the private key")
        }
        throw TLSError.invalidConfiguration.with(
            detail: "the client private key PEM holds no readable key" + (queue.isEmpty ? "" : " (\(queue))"))
    }

    /// Whether a PEM key is encrypted: a PKCS #8 `ENCRYPTED PRIVATE KEY` block, or a
    /// traditional block with a `Proc-Type: 4,ENCRYPTED` header (RFC 1421 §4.6.1.1).
    private static func isEncrypted(_ pem: Data) -> Bool {
        let text = String(decoding: pem, as: UTF8.self)
        return text.contains("-----BEGIN ENCRYPTED PRIVATE KEY-----") || text.contains("Proc-Type: 4,ENCRYPTED")
    }

    /// The passphrase callback for a key read without a passphrase: it refuses.
    private static let noPassphrase: @convention(c) (
        UnsafeMutablePointer<CChar>?, Int32, Int32, UnsafeMutableRawPointer?
    ) -> Int32 = { _, _, _, _ in -1 }

    /// The passphrase callback that copies the NUL-terminated passphrase passed as user data.
    private static let givenPassphrase: @convention(c) (
        UnsafeMutablePointer<CChar>?, Int32, Int32, UnsafeMutableRawPointer?
    ) -> Int32 = { buffer, size, _, user in
        guard let buffer, let user, size > 0 else { return -1 }
        let text = user.assumingMemoryBound(to: CChar.self)
        let length = strlen(text)
        guard length <= Int(size) else { return -1 }
        buffer.update(from: text, count: length)
        return Int32(length)
    }
}
