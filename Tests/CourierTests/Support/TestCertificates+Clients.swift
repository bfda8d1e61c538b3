import CourierTestSupport
import Foundation

extension TestCertificates {
    /// Client certificates for the mutual-TLS tests, made in the same directory.
    struct Clients: Sendable {
        /// `CN=client-a`, signed by the CA, for client authentication.
        let a: Pair
        /// `CN=client-b`, signed by the CA.
        let b: Pair
        /// `CN=stranger`, self-signed: no server trusts it.
        let stranger: Pair
        /// `client-a`'s key, encrypted with ``passphrase`` (PKCS #8, AES-256).
        let encryptedKeyA: String
        /// The passphrase of ``encryptedKeyA``.
        let passphrase: String
    }

    /// Makes the client certificates on a thread of their own.
    func makeClients() async throws -> Clients {
        let directory = directory
        return try await blocking {
            let a = try Self.sign("client-a", names: "DNS:client-a.example", dates: nil, usage: "clientAuth", in: directory)
            let passphrase = "client-a passphrase"
            let encrypted = a.key + ".encrypted"
            try Self.run(["pkey", "-in", a.key, "-aes256", "-passout", "pass:\(passphrase)", "-out", encrypted],
                         in: directory)
            return Clients(a: a,
                           b: try Self.sign("client-b", names: "DNS:client-b.example", dates: nil, usage: "clientAuth",
                                            in: directory),
                           stranger: try Self.selfSign("stranger", names: "DNS:stranger.example", in: directory),
                           encryptedKeyA: encrypted, passphrase: passphrase)
        }
    }

    /// The CA certificate's path (for a server's `ssl_client_certificate` or `-CAfile`).
    var caPath: String {
        directory.appendingPathComponent("ca.pem").path
    }
}
