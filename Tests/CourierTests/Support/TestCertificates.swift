import CourierTestSupport
import Foundation

/// Certificates made at test time with the `openssl` command-line tool: a throwaway CA and
/// server certificates signed by it (valid, expired, for another host), plus a self-signed one
/// that no trust store knows. Everything lives in a temporary directory removed by ``remove()``.
struct TestCertificates: Sendable {
    /// A certificate and its key, as file paths (what nginx wants).
    struct Pair: Sendable {
        let certificate: String
        let key: String
    }

    let directory: URL
    /// The CA certificate, PEM.
    let caPEM: Data
    /// `localhost` and `127.0.0.1`, signed by the CA, valid now.
    let valid: Pair
    /// `localhost` and `127.0.0.1`, signed by the CA, expired in 2021.
    let expired: Pair
    /// `other.example` only, signed by the CA.
    let wrongHost: Pair
    /// `localhost` and `127.0.0.1`, self-signed.
    let selfSigned: Pair

    /// Whether the openssl tool is installed.
    static var isAvailable: Bool { tool != nil }

    private static let tool: String? = ["/usr/bin/openssl", "/usr/local/bin/openssl", "/bin/openssl"]
        .first { FileManager.default.isExecutableFile(atPath: $0) }

    /// Makes the CA and all certificates on a thread of its own (see ``blocking(_:)``).
    static func make() async throws -> TestCertificates {
        try await blocking { try makeNow() }
    }

    /// Makes the CA and all certificates, blocking the calling thread.
    static func makeNow() throws -> TestCertificates {
        let directory = URL(fileURLWithPath: NSTemporaryDirectory()).appendingPathComponent("courier-certs-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory.appendingPathComponent("newcerts"), withIntermediateDirectories: true)
        do {
            let caConfig = """
                [ca]
                default_ca = local
                [local]
                dir = \(directory.path)
                database = $dir/index.txt
                new_certs_dir = $dir/newcerts
                serial = $dir/serial
                default_md = sha256
                policy = anything
                unique_subject = no
                copy_extensions = none
                [anything]
                commonName = supplied
                [req]
                distinguished_name = name
                prompt = no
                [name]
                CN = Courier Native Transport Test CA
                [authority]
                basicConstraints = critical, CA:TRUE
                keyUsage = critical, keyCertSign, cRLSign
                subjectKeyIdentifier = hash
                """
            try caConfig.write(to: directory.appendingPathComponent("openssl.cnf"), atomically: true, encoding: .utf8)
            try Data().write(to: directory.appendingPathComponent("index.txt"))
            try "1000\n".write(to: directory.appendingPathComponent("serial"), atomically: true, encoding: .utf8)
            try run(["req", "-x509", "-new", "-config", "openssl.cnf", "-extensions", "authority", "-nodes",
                     "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:P-256", "-keyout", "ca.key", "-out", "ca.pem",
                     "-days", "3"], in: directory)
            let local = "DNS:localhost, IP:127.0.0.1, IP:::1"
            let set = TestCertificates(
                directory: directory,
                caPEM: try Data(contentsOf: directory.appendingPathComponent("ca.pem")),
                valid: try sign("valid", names: local, dates: nil, in: directory),
                expired: try sign("expired", names: local, dates: ("20200101000000Z", "20210101000000Z"), in: directory),
                wrongHost: try sign("wronghost", names: "DNS:other.example", dates: nil, in: directory),
                selfSigned: try selfSign("selfsigned", names: local, in: directory))
            return set
        } catch {
            try? FileManager.default.removeItem(at: directory)
            throw error
        }
    }

    /// SHA-256 of a certificate's DER form.
    func certificateSHA256(_ pair: Pair) throws -> Data {
        try Self.run(["x509", "-in", pair.certificate, "-outform", "DER", "-out", "digest-input.der"], in: directory)
        return try Self.run(["dgst", "-sha256", "-binary", "digest-input.der"], in: directory)
    }

    /// SHA-256 of a certificate's DER SubjectPublicKeyInfo.
    func publicKeySHA256(_ pair: Pair) throws -> Data {
        try Self.run(["pkey", "-in", pair.key, "-pubout", "-outform", "DER", "-out", "digest-input.der"], in: directory)
        return try Self.run(["dgst", "-sha256", "-binary", "digest-input.der"], in: directory)
    }

    /// Removes the directory.
    func remove() {
        try? FileManager.default.removeItem(at: directory)
    }

    /// Issues a certificate from the CA: `usage` is the extended key usage (`clientAuth` for a
    /// client certificate), `names` the subjectAltName.
    static func sign(_ name: String, names: String, dates: (String, String)?, usage: String = "serverAuth",
                     in directory: URL) throws -> Pair {
        let extensions = """
            [server]
            basicConstraints = critical, CA:FALSE
            keyUsage = critical, digitalSignature
            extendedKeyUsage = \(usage)
            subjectAltName = \(names)
            """
        try extensions.write(to: directory.appendingPathComponent("\(name).ext"), atomically: true, encoding: .utf8)
        try run(["req", "-new", "-nodes", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:P-256",
                 "-keyout", "\(name).key", "-out", "\(name).csr", "-subj", "/CN=\(name)"], in: directory)
        var arguments = ["ca", "-batch", "-config", "openssl.cnf", "-cert", "ca.pem", "-keyfile", "ca.key",
                         "-extfile", "\(name).ext", "-extensions", "server", "-notext",
                         "-in", "\(name).csr", "-out", "\(name).pem"]
        if let (start, end) = dates {
            arguments += ["-startdate", start, "-enddate", end]
        } else {
            arguments += ["-days", "3"]
        }
        try run(arguments, in: directory)
        return pair(name, in: directory)
    }

    static func selfSign(_ name: String, names: String, in directory: URL) throws -> Pair {
        try run(["req", "-x509", "-new", "-nodes", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:P-256",
                 "-keyout", "\(name).key", "-out", "\(name).pem", "-days", "3", "-subj", "/CN=\(name)",
                 "-addext", "subjectAltName=\(names)"], in: directory)
        return pair(name, in: directory)
    }

    private static func pair(_ name: String, in directory: URL) -> Pair {
        Pair(certificate: directory.appendingPathComponent("\(name).pem").path,
             key: directory.appendingPathComponent("\(name).key").path)
    }

    /// Runs openssl in `directory` (relative file arguments are resolved against it); returns
    /// its standard output.
    @discardableResult
    static func run(_ arguments: [String], in directory: URL) throws -> Data {
        guard let tool else { throw PeerError("openssl is not installed") }
        let known: Set<String> = ["openssl.cnf", "ca.pem", "ca.key", "digest-input.der"]
        let resolved = arguments.map { argument -> String in
            let looksLikeFile = known.contains(argument) || [".ext", ".csr", ".pem", ".key", ".der"].contains { argument.hasSuffix($0) }
            return looksLikeFile && !argument.hasPrefix("/") ? directory.appendingPathComponent(argument).path : argument
        }
        let output = directory.appendingPathComponent("openssl-\(UUID().uuidString).out").path
        let errors = directory.appendingPathComponent("openssl-\(UUID().uuidString).err").path
        defer {
            try? FileManager.default.removeItem(atPath: output)
            try? FileManager.default.removeItem(atPath: errors)
        }
        let status = try ChildProcess.spawn(tool, resolved, stdout: output, stderr: errors).wait()
        guard status == 0 else {
            let messages = (try? String(contentsOfFile: errors, encoding: .utf8)) ?? ""
            throw PeerError("openssl \(arguments.joined(separator: " ")) failed (\(status)): \(messages)")
        }
        return FileManager.default.contents(atPath: output) ?? Data()
    }
}
