import CourierTestSupport
import Foundation

/// The server certificates a ``TLSConversationOrigin`` can be made to present, and what each one
/// is: its subjectAltName entries, its issuer, its dates and its key. The TLS conversation model
/// (``TLSConversationModel``) judges a handshake from these facts alone.
enum TLSConversationLeaf: String, CaseIterable, Sendable {
    /// Every test name, signed by the test CA, valid now, key K1.
    case good
    /// Like ``good`` with another key (K2): a key pin on K1 fails.
    case otherKey
    /// Only `alpha.test`.
    case alphaOnly
    /// Only the iPAddress 127.0.0.1.
    case ipOnly
    /// Only the DNS name `127.0.0.1` (an IP written as a name, which matches nothing).
    case ipAsDNS
    /// Only `*.wild.test`.
    case wildOnly
    /// Only the partial wildcard `x*.wild.test`, which is never honoured.
    case partialWild
    /// Every test name, expired in 2021.
    case expired
    /// Every test name, valid from 2040.
    case notYetValid
    /// Every test name, signed by a CA no client trusts.
    case unknownCA
    /// Every test name, self-signed.
    case selfSigned
    /// Every test name, signed by an intermediate CA that the server sends along.
    case chained
    /// The same leaf as ``chained``, sent without its intermediate.
    case missingIntermediate

    /// The subjectAltName entries (`DNS:` names and `IP:` addresses).
    var subjectAltNames: [String] {
        switch self {
        case .alphaOnly: ["DNS:alpha.test"]
        case .ipOnly: ["IP:127.0.0.1"]
        case .ipAsDNS: ["DNS:127.0.0.1"]
        case .wildOnly: ["DNS:*.wild.test"]
        case .partialWild: ["DNS:x*.wild.test"]
        default: ["DNS:alpha.test", "DNS:beta.test", "DNS:*.wild.test", "IP:127.0.0.1"]
        }
    }

    /// Whether a client that trusts only the test CA can build a chain to it.
    var chainsToTestCA: Bool { ![.unknownCA, .selfSigned, .missingIntermediate].contains(self) }

    /// Whether the certificate's dates hold now.
    var isInDate: Bool { self != .expired && self != .notYetValid }

    /// Whether its key is K1 (every certificate's but ``otherKey``'s).
    var hasFirstKey: Bool { self != .otherKey }
}

/// The files of the TLS conversation test, made by one shell script of `openssl` commands (one
/// process start: each start of a child costs the test up to half a second) in a temporary
/// directory: a test CA, a certificate chain and key file for every ``TLSConversationLeaf``, two
/// client identities and the key pins.
struct TLSConversationCertificates: Sendable {
    /// The directory everything is in; ``remove()`` deletes it.
    let directory: URL
    /// The test CA's certificate, PEM.
    let caPEM: Data
    /// The chain file (leaf first) and key file of each leaf.
    let served: [TLSConversationLeaf: TestCertificates.Pair]
    /// A client certificate signed by the test CA (servers that ask accept it).
    let clientA: TestCertificates.Pair
    /// A self-signed client certificate (servers that ask refuse it).
    let stranger: TestCertificates.Pair
    /// SHA-256 of K1's SubjectPublicKeyInfo.
    let firstKeyPin: Data
    /// SHA-256 of the SubjectPublicKeyInfo of a key no server uses.
    let unusedKeyPin: Data

    /// The test CA's certificate file (for a server that checks client certificates).
    var caPath: String { directory.appendingPathComponent("ca.pem").path }

    /// Makes everything on a thread of its own.
    static func make() async throws -> TLSConversationCertificates {
        try await blocking { try makeNow() }
    }

    /// Deletes the directory.
    func remove() {
        try? FileManager.default.removeItem(at: directory)
    }

    private static func makeNow() throws -> TLSConversationCertificates {
        let directory = URL(fileURLWithPath: NSTemporaryDirectory()).appendingPathComponent("courier-tls-conversation-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        func path(_ name: String) -> String { directory.appendingPathComponent(name).path }
        do {
            try script.write(to: directory.appendingPathComponent("make.sh"), atomically: true, encoding: .utf8)
            let status = try ChildProcess.spawn("/bin/sh", ["-c", "cd \"$0\" && sh make.sh > make.log 2>&1", directory.path]).wait()
            guard status == 0 else {
                let log = (try? String(contentsOfFile: path("make.log"), encoding: .utf8)) ?? ""
                throw PeerError("making the TLS conversation certificates failed (\(status)): \(log)")
            }
            var served: [TLSConversationLeaf: TestCertificates.Pair] = [:]
            for leaf in TLSConversationLeaf.allCases {
                let file = leaf == .chained ? "chained-bundle.pem" : leaf == .missingIntermediate ? "chained.pem" : "\(leaf.rawValue).pem"
                served[leaf] = .init(certificate: path(file), key: path(leaf.hasFirstKey ? "k1.key" : "k2.key"))
            }
            return TLSConversationCertificates(
                directory: directory, caPEM: try Data(contentsOf: URL(fileURLWithPath: path("ca.pem"))), served: served,
                clientA: .init(certificate: path("client.pem"), key: path("client.key")),
                stranger: .init(certificate: path("stranger.pem"), key: path("stranger.key")),
                firstKeyPin: try Data(contentsOf: URL(fileURLWithPath: path("k1.pin"))),
                unusedKeyPin: try Data(contentsOf: URL(fileURLWithPath: path("unused.pin"))))
        } catch {
            try? FileManager.default.removeItem(at: directory)
            throw error
        }
    }

    /// The commands: keys K1, K2 and an unused one and their pins; the test CA, a CA nobody
    /// trusts and an intermediate under the test CA; then every leaf and the client certificates.
    private static var script: String {
        var text = #"""
            set -e
            mkdir -p newcerts && : > index.txt && echo 1000 > serial
            cat > openssl.cnf <<END
            [ca]
            default_ca = local
            [local]
            dir = .
            database = index.txt
            new_certs_dir = newcerts
            serial = serial
            default_md = sha256
            policy = anything
            unique_subject = no
            copy_extensions = none
            [anything]
            commonName = supplied
            [req]
            distinguished_name = name
            [name]
            [authority]
            basicConstraints = critical, CA:TRUE
            keyUsage = critical, keyCertSign, cRLSign
            subjectKeyIdentifier = hash
            END
            for key in k1 k2 unused ca client stranger; do
              openssl genpkey -algorithm EC -pkeyopt ec_paramgen_curve:P-256 -out $key.key
            done
            for key in k1 unused; do openssl pkey -in $key.key -pubout -outform DER | openssl dgst -sha256 -binary > $key.pin; done
            openssl req -x509 -new -config openssl.cnf -extensions authority -key ca.key -subj '/CN=Conversation Test CA' -out ca.pem -days 3
            openssl req -x509 -new -config openssl.cnf -extensions authority -key k2.key -subj '/CN=Unknown Conversation CA' -out cab.pem -days 3
            cp k2.key cab.key && cp k2.key inter.key
            # issue NAME KEY ISSUER SANS USAGE CA-DATE-ARGUMENTS...; SANS "authority" makes a CA.
            issue() {
              name=$1 key=$2 issuer=$3 sans=$4 usage=$5; shift 5
              if [ "$sans" = authority ]; then
                printf '[ext]\nbasicConstraints = critical, CA:TRUE\nkeyUsage = critical, keyCertSign, cRLSign\n' > $name.ext
              else
                printf '[ext]\nbasicConstraints = critical, CA:FALSE\nkeyUsage = critical, digitalSignature\nextendedKeyUsage = %s\nsubjectAltName = %s\n' "$usage" "$sans" > $name.ext
              fi
              openssl req -new -config openssl.cnf -key $key -out $name.csr -subj /CN=$name
              openssl ca -batch -config openssl.cnf -cert $issuer.pem -keyfile $issuer.key -extfile $name.ext -extensions ext -notext -in $name.csr -out $name.pem "$@"
            }
            issue inter k2.key ca authority - -days 2
            issue client client.key ca DNS:client.test clientAuth -days 2
            openssl req -x509 -new -config openssl.cnf -key stranger.key -out stranger.pem -days 3 -subj /CN=stranger

            """#
        for leaf in TLSConversationLeaf.allCases where leaf != .selfSigned && leaf != .missingIntermediate {
            let issuer = leaf == .unknownCA ? "cab" : leaf == .chained ? "inter" : "ca"
            let dates = switch leaf {
            case .expired: "-startdate 20200101000000Z -enddate 20210101000000Z"
            case .notYetValid: "-startdate 20400101000000Z -enddate 20410101000000Z"
            default: "-days 2"
            }
            text += "issue \(leaf.rawValue) \(leaf.hasFirstKey ? "k1.key" : "k2.key") \(issuer) "
                + "'\(leaf.subjectAltNames.joined(separator: ", "))' serverAuth \(dates)\n"
        }
        text += "openssl req -x509 -new -config openssl.cnf -key k1.key -out selfSigned.pem -days 3 -subj /CN=self "
            + "-addext 'subjectAltName=\(TLSConversationLeaf.selfSigned.subjectAltNames.joined(separator: ","))'\n"
        text += "cat chained.pem inter.pem > chained-bundle.pem\n"
        return text
    }
}
