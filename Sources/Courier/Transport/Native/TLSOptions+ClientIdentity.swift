import CourierTLS
import Foundation

extension TLSOptions {
    /// A client certificate chain and its private key, presented when a server asks for a
    /// client certificate (mutual TLS, "mTLS").
    ///
    /// Both are PEM: the chain is the client certificate followed by any intermediates; the key
    /// is one private key block, encrypted (give its passphrase) or not. Creating an identity
    /// reads and checks both at once, so a wrong passphrase or a key that belongs to another
    /// certificate fails here, with its own error, and not on the first request.
    ///
    /// An identity is never printed: its description shows sizes only, and no error or log line
    /// carries the key or the passphrase. A transport holds one identity for all its
    /// connections, TLS sessions and pooled connections, so nothing made with one identity is
    /// ever used with another.
    public struct ClientIdentity: Sendable, Hashable, CustomStringConvertible, CustomDebugStringConvertible,
        CustomReflectable {
        /// The identity in CourierTLS's terms.
        let identity: TLSClientIdentity

        /// Creates an identity from PEM data and checks it.
        ///
        /// - Parameters:
        ///   - certificateChainPEM: the client certificate, then any intermediate certificates.
        ///   - privateKeyPEM: the client certificate's private key.
        ///   - passphrase: the passphrase of an encrypted key. Default: `nil`.
        /// - Throws: ``HTTPConnectionError/clientKeyPassphraseIncorrect`` for an encrypted key
        ///   without the right passphrase; ``HTTPConnectionError/clientKeyMismatch`` when the
        ///   key is not the certificate's; ``HTTPConnectionError/tlsFailed`` for PEM that holds
        ///   no certificate or no key.
        public init(certificateChainPEM: Data, privateKeyPEM: Data, passphrase: String? = nil) throws(HTTPConnectionError) {
            try self.init(TLSClientIdentity(certificateChainPEM: certificateChainPEM, privateKeyPEM: privateKeyPEM,
                                            passphrase: passphrase))
        }

        /// Creates an identity from PEM files, reads them now and checks them.
        ///
        /// - Parameters:
        ///   - certificateChainFile: the path of the PEM certificate chain.
        ///   - privateKeyFile: the path of the PEM private key (may be the same file).
        ///   - passphrase: the passphrase of an encrypted key. Default: `nil`.
        /// - Throws: as ``init(certificateChainPEM:privateKeyPEM:passphrase:)``, and
        ///   ``HTTPConnectionError/tlsFailed`` when a file cannot be read.
        public init(certificateChainFile: String, privateKeyFile: String, passphrase: String? = nil) throws(HTTPConnectionError) {
            let identity: TLSClientIdentity
            do {
                identity = try TLSClientIdentity(certificateChainFile: certificateChainFile,
                                                 privateKeyFile: privateKeyFile, passphrase: passphrase)
            } catch {
                throw NativeErrors.tls(error)
            }
            try self.init(identity)
        }

        private init(_ identity: TLSClientIdentity) throws(HTTPConnectionError) {
            do {
                try identity.validate()
            } catch {
                throw NativeErrors.tls(error)
            }
            self.identity = identity
        }

        /// The chain's size; never the key or the passphrase.
        public var description: String {
            "ClientIdentity(certificate chain: \(identity.certificateChainPEM.count) bytes, private key: redacted)"
        }

        /// The same as ``description``.
        public var debugDescription: String { description }

        /// No children: `dump` and mirrors show ``description`` only.
        public var customMirror: Mirror {
            Mirror(self, children: [], displayStyle: .struct)
        }
    }
}
