import Foundation

/// A throwaway certificate authority in a temporary directory, built with the
/// `openssl` tool: EC P-256 keys, a CA certificate valid for two days, and
/// leaf certificates issued on demand with any names and validity window.
///
/// Call ``remove()`` when done (use `defer`).
struct TestPKI {
    /// A certificate and its private key, as files.
    struct Leaf {
        let certificatePath: String
        let keyPath: String
    }

    let directory: URL

    /// The CA certificate in PEM form.
    let caPEM: Data

    /// Creates the CA.
    ///
    /// - Throws: ``TestFailure`` if openssl fails.
    static func make() throws -> TestPKI {
        let directory = FileManager.default.temporaryDirectory
            .appendingPathComponent("courier-tls-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        do {
            try """
            [ req ]
            distinguished_name = dn
            prompt = no
            [ dn ]
            CN = Courier Test CA
            [ v3_ca ]
            basicConstraints = critical, CA:TRUE
            keyUsage = critical, keyCertSign, cRLSign
            subjectKeyIdentifier = hash
            [ ca ]
            default_ca = testca
            [ testca ]
            database = index.txt
            new_certs_dir = issued
            serial = serial
            default_md = sha256
            policy = policy_any
            unique_subject = no
            email_in_dn = no
            [ policy_any ]
            commonName = supplied

            """.write(to: directory.appendingPathComponent("ca.cnf"), atomically: true, encoding: .utf8)
            try Data().write(to: directory.appendingPathComponent("index.txt"))
            try "01\n".write(to: directory.appendingPathComponent("serial"), atomically: true, encoding: .utf8)
            try FileManager.default.createDirectory(at: directory.appendingPathComponent("issued"),
                                                    withIntermediateDirectories: true)
            try OpenSSLTool.run(["req", "-x509", "-new", "-config", "ca.cnf", "-extensions", "v3_ca",
                                 "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes",
                                 "-keyout", "ca.key", "-out", "ca.pem", "-days", "2"], in: directory)
            let caPEM = try Data(contentsOf: directory.appendingPathComponent("ca.pem"))
            return TestPKI(directory: directory, caPEM: caPEM)
        } catch {
            try? FileManager.default.removeItem(at: directory)
            throw error
        }
    }

    /// Issues a server certificate signed by the CA.
    ///
    /// - Parameters:
    ///   - name: a file name stem, unique within this PKI.
    ///   - subjectAltName: e.g. `"DNS:localhost, IP:127.0.0.1"`; `nil` for a
    ///     certificate that names its host in the subject's CN (`name`) only.
    ///   - validity: `nil` for "now plus two days", or explicit
    ///     `YYYYMMDDHHMMSSZ` start and end dates (`openssl ca -startdate/-enddate`,
    ///     since `x509 -not_before` needs OpenSSL 3.4).
    ///   - usage: the extended key usage; `clientAuth` for a client certificate.
    func issue(_ name: String, subjectAltName: String?,
               validity: (start: String, end: String)? = nil, usage: String = "serverAuth") throws -> Leaf {
        try """
        [ leaf ]
        basicConstraints = critical, CA:FALSE
        keyUsage = critical, digitalSignature
        extendedKeyUsage = \(usage)
        \(subjectAltName.map { "subjectAltName = \($0)" } ?? "")

        """.write(to: directory.appendingPathComponent("\(name).ext"), atomically: true, encoding: .utf8)
        try OpenSSLTool.run(["req", "-new", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1",
                             "-nodes", "-keyout", "\(name).key", "-out", "\(name).csr",
                             "-subj", "/CN=\(name)"], in: directory)
        var arguments = ["ca", "-batch", "-config", "ca.cnf", "-extfile", "\(name).ext", "-extensions", "leaf",
                         "-cert", "ca.pem", "-keyfile", "ca.key", "-in", "\(name).csr",
                         "-out", "\(name).pem", "-notext"]
        if let validity {
            arguments += ["-startdate", validity.start, "-enddate", validity.end]
        } else {
            arguments += ["-days", "2"]
        }
        try OpenSSLTool.run(arguments, in: directory)
        return leaf(name)
    }

    /// Creates an intermediate CA signed by the CA, and a server certificate it signs.
    ///
    /// - Parameters:
    ///   - name: a file name stem, unique within this PKI (the intermediate is `name-ca`).
    ///   - subjectAltName: the server certificate's names, e.g. `"DNS:localhost"`.
    /// - Returns: the server certificate, and the path of the intermediate's certificate (for
    ///   `s_server -cert_chain`).
    func issueThroughIntermediate(_ name: String, subjectAltName: String) throws -> (leaf: Leaf, intermediatePath: String) {
        let intermediate = "\(name)-ca"
        try """
        [ intermediate ]
        basicConstraints = critical, CA:TRUE, pathlen:0
        keyUsage = critical, keyCertSign, cRLSign
        subjectKeyIdentifier = hash
        authorityKeyIdentifier = keyid
        [ leaf ]
        basicConstraints = critical, CA:FALSE
        keyUsage = critical, digitalSignature
        extendedKeyUsage = serverAuth
        subjectAltName = \(subjectAltName)

        """.write(to: directory.appendingPathComponent("\(name).ext"), atomically: true, encoding: .utf8)
        for stem in [intermediate, name] {
            try OpenSSLTool.run(["req", "-new", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1",
                                 "-nodes", "-keyout", "\(stem).key", "-out", "\(stem).csr", "-subj", "/CN=\(stem)"],
                                in: directory)
        }
        try OpenSSLTool.run(["ca", "-batch", "-config", "ca.cnf", "-extfile", "\(name).ext", "-extensions", "intermediate",
                             "-cert", "ca.pem", "-keyfile", "ca.key", "-in", "\(intermediate).csr",
                             "-out", "\(intermediate).pem", "-notext", "-days", "2"], in: directory)
        try OpenSSLTool.run(["x509", "-req", "-in", "\(name).csr", "-CA", "\(intermediate).pem",
                             "-CAkey", "\(intermediate).key", "-CAcreateserial", "-sha256", "-days", "2",
                             "-extfile", "\(name).ext", "-extensions", "leaf", "-out", "\(name).pem"], in: directory)
        return (leaf(name), directory.appendingPathComponent("\(intermediate).pem").path)
    }

    /// Creates a self-signed server certificate (not signed by the CA).
    func selfSigned(_ name: String, subjectAltName: String) throws -> Leaf {
        try OpenSSLTool.run(["req", "-x509", "-new", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1",
                             "-nodes", "-keyout", "\(name).key", "-out", "\(name).pem", "-days", "2",
                             "-subj", "/CN=\(name)", "-addext", "subjectAltName=\(subjectAltName)"],
                            in: directory)
        return leaf(name)
    }

    /// Writes a copy of a leaf's key encrypted with a passphrase (PKCS #8, AES-256) and returns its path.
    func encryptedKey(_ leaf: Leaf, passphrase: String) throws -> String {
        let path = leaf.keyPath + ".encrypted"
        try OpenSSLTool.run(["pkey", "-in", leaf.keyPath, "-aes256", "-passout", "pass:\(passphrase)", "-out", path],
                            in: directory)
        return path
    }

    /// SHA-256 of a certificate's DER encoding, computed by the openssl tool.
    func certificateSHA256(_ leaf: Leaf) throws -> Data {
        try OpenSSLTool.run(["x509", "-in", leaf.certificatePath, "-outform", "DER", "-out", "pin.der"],
                            in: directory)
        return try OpenSSLTool.run(["dgst", "-sha256", "-binary", "pin.der"], in: directory)
    }

    /// SHA-256 of a certificate's DER SubjectPublicKeyInfo, computed by the openssl tool.
    func publicKeySHA256(_ leaf: Leaf) throws -> Data {
        try OpenSSLTool.run(["pkey", "-in", leaf.keyPath, "-pubout", "-outform", "DER", "-out", "spki.der"],
                            in: directory)
        return try OpenSSLTool.run(["dgst", "-sha256", "-binary", "spki.der"], in: directory)
    }

    /// Deletes the directory and everything in it.
    func remove() {
        try? FileManager.default.removeItem(at: directory)
    }

    private func leaf(_ name: String) -> Leaf {
        Leaf(certificatePath: directory.appendingPathComponent("\(name).pem").path,
             keyPath: directory.appendingPathComponent("\(name).key").path)
    }
}
