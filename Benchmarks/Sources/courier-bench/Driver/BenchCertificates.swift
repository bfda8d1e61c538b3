import Foundation

/// The certificates of the HTTPS scenarios, made at run time with the `openssl` tool: a
/// throwaway CA (ECDSA P-256) and a server certificate it signed for `127.0.0.1` and
/// `localhost`, valid for 3 days. Every client under measurement trusts the CA.
struct BenchCertificates: Sendable {
    /// The CA certificate (PEM), which the clients trust.
    let caPath: String
    /// The server certificate (PEM), for nginx.
    let certificatePath: String
    /// The server's private key (PEM), for nginx.
    let keyPath: String

    /// Where `openssl` is, if installed.
    static func locate() -> String? {
        ["/usr/bin/openssl", "/usr/local/bin/openssl"].first { FileManager.default.isExecutableFile(atPath: $0) }
    }

    /// Makes the CA and the server certificate in `folder`.
    /// - Throws: ``BenchError`` when openssl fails.
    init(openssl: String, folder: URL) throws {
        func path(_ name: String) -> String { folder.appendingPathComponent(name).path }
        try "subjectAltName = IP:127.0.0.1, DNS:localhost\nbasicConstraints = critical, CA:FALSE\nextendedKeyUsage = serverAuth\n"
            .write(toFile: path("server.ext"), atomically: true, encoding: .utf8)
        let steps: [[String]] = [
            ["req", "-x509", "-new", "-nodes", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:P-256",
             "-keyout", path("ca.key"), "-out", path("ca.pem"), "-days", "3", "-subj", "/CN=courier-bench CA",
             "-addext", "basicConstraints=critical,CA:TRUE", "-addext", "keyUsage=critical,keyCertSign"],
            ["req", "-new", "-nodes", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:P-256",
             "-keyout", path("server.key"), "-out", path("server.csr"), "-subj", "/CN=127.0.0.1"],
            ["x509", "-req", "-in", path("server.csr"), "-CA", path("ca.pem"), "-CAkey", path("ca.key"),
             "-CAcreateserial", "-out", path("server.pem"), "-days", "3", "-sha256", "-extfile", path("server.ext")],
        ]
        for arguments in steps {
            let log = path("openssl.log")
            let child = try ChildProcess(openssl, arguments, standardOutput: log, standardError: log)
            guard let exit = child.wait(timeout: 30), exit.status == 0 else {
                child.stop()
                throw BenchError("openssl \(arguments[0]) failed: \((try? String(contentsOfFile: log, encoding: .utf8)) ?? "")")
            }
        }
        caPath = path("ca.pem")
        certificatePath = path("server.pem")
        keyPath = path("server.key")
    }
}
