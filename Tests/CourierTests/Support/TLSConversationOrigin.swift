import COpenSSL
import CourierTestSupport
import Foundation
import Synchronization
#if canImport(Glibc)
import Glibc
#endif

/// An in-process HTTPS origin on 127.0.0.1 (port 0) for the TLS conversation test, whose TLS
/// settings the test changes between requests:
///
/// - the certificate it presents (``present(_:)``), applied to each new connection, under the
///   same server context, so that sessions it issued before can still be resumed;
/// - whether it requires a client certificate signed by the test CA, and whether it speaks at
///   most TLS 1.2 (``reconfigure(requiresClientCertificate:maximumTLS12:)``): each change makes a
///   new server context, with new ticket keys and an empty session cache (a new *epoch*), so
///   nothing issued before is resumed, until ``returnTo(epoch:)`` goes back to an earlier one.
///
/// It answers every request with `200` and a line that says what it saw of the connection:
/// `resumed=0|1 version=TLSv1.x sni=<name or -> client=0|1 request=<n on this connection>`.
/// A target starting with `/close` is answered with `Connection: close`, and the connection
/// closed. One thread per connection; every wait is bounded (``PeerStream``).
final class TLSConversationOrigin: Sendable {
    /// The port it accepts on.
    let port: Int
    private let listener: Int32
    private let sockets = AcceptedSockets()
    private let certificates: TLSConversationCertificates
    /// The current server context and the leaf new connections get.
    private let state: Mutex<(context: ServerTLSContext, leaf: TLSConversationLeaf,
                              epochs: [(ServerTLSContext, requires: Bool, maximumTLS12: Bool)])>
    /// Connections being served, and handshakes that completed with a client certificate.
    private let counts = Mutex((live: 0, certified: 0))

    /// How many handshakes completed with a client certificate (one the server accepted).
    var clientCertificatesReceived: Int { counts.withLock { $0.certified } }
    /// How many connections are still being served (handshaking, or reading requests).
    var liveConnections: Int { counts.withLock { $0.live } }

    /// Starts listening, presenting ``TLSConversationLeaf/good`` with TLS 1.3 and no client
    /// certificate asked for.
    init(certificates: TLSConversationCertificates) throws {
        self.certificates = certificates
        let context = try Self.context(certificates, requiresClientCertificate: false, maximumTLS12: false)
        state = Mutex((context, .good, [(context, false, false)]))
        let (listener, port) = try LoopbackPort.listening(backlog: 64)
        self.listener = listener
        self.port = port
        let thread = Thread { [self] in
            while true {
                let client = accept(listener, nil, nil)
                guard client >= 0 else { return }
                sockets.add(client)
                counts.withLock { $0.live += 1 }
                let (context, leaf) = state.withLock { ($0.context, $0.leaf) }
                Thread { [self] in serve(client, context: context, leaf: leaf) }.start()
            }
        }
        thread.start()
    }

    deinit {
        stop()
        Glibc.close(listener)
    }

    /// New connections present `leaf` from now on (connections already open keep theirs).
    func present(_ leaf: TLSConversationLeaf) {
        state.withLock { $0.leaf = leaf }
    }

    /// Starts a new epoch: a new server context with these settings, whose ticket keys and
    /// session cache are new, so that no session issued before is resumed.
    /// - Returns: the epoch's number, for ``returnTo(epoch:)``.
    @discardableResult
    func reconfigure(requiresClientCertificate: Bool, maximumTLS12: Bool) throws -> Int {
        let context = try Self.context(certificates, requiresClientCertificate: requiresClientCertificate,
                                       maximumTLS12: maximumTLS12)
        return state.withLock { state in
            state.context = context
            state.epochs.append((context, requiresClientCertificate, maximumTLS12))
            return state.epochs.count - 1
        }
    }

    /// Goes back to an earlier epoch's server context (as a second server behind the same name
    /// would answer): the sessions it issued can be resumed again.
    /// - Returns: that epoch's settings.
    func returnTo(epoch: Int) -> (requiresClientCertificate: Bool, maximumTLS12: Bool) {
        state.withLock { state in
            let (context, requires, maximumTLS12) = state.epochs[epoch]
            state.context = context
            return (requires, maximumTLS12)
        }
    }

    /// Stops accepting and shuts down every connection.
    func stop() {
        Glibc.shutdown(listener, Int32(SHUT_RDWR))
        sockets.shutDownAll()
    }

    /// Runs one connection: the handshake with `leaf`'s certificate, then requests until the
    /// client closes or asks for `/close`.
    private func serve(_ client: Int32, context: ServerTLSContext, leaf: TLSConversationLeaf) {
        let stream = PeerStream(fd: client)
        defer {
            stream.release()
            sockets.close(client)
            counts.withLock { $0.live -= 1 }
        }
        guard let pair = certificates.served[leaf] else { return }
        do {
            try stream.acceptTLS(context) { ssl in
                SSL_use_certificate_chain_file(ssl, pair.certificate) == 1
                    && SSL_use_PrivateKey_file(ssl, pair.key, SSL_FILETYPE_PEM) == 1
            }
        } catch {
            // Let the client read the alert before the socket goes: a close with its request
            // still unread would reset the connection instead.
            Glibc.shutdown(client, Int32(SHUT_WR))
            _ = stream.read(waitingAtMost: 2_000)
            return
        }
        guard let ssl = stream.tlsSession else { return }
        let version = String(cString: SSL_get_version(ssl))
        let name = SSL_get_servername(ssl, TLSEXT_NAMETYPE_host_name).map { String(cString: $0) } ?? "-"
        let peerCertificate = SSL_get1_peer_certificate(ssl)
        let presented = peerCertificate != nil
        X509_free(peerCertificate)
        if presented { counts.withLock { $0.certified += 1 } }
        let report = "resumed=\(SSL_session_reused(ssl)) version=\(version) sni=\(name) client=\(presented ? 1 : 0)"
        var pending: [UInt8] = []
        var count = 0
        // Bounded: each round needs a request from the client, and reads wait at most 10 s.
        while let head = stream.readHead(&pending) {
            count += 1
            let close = head.split(separator: " ", maxSplits: 2).dropFirst().first?.hasPrefix("/close") ?? true
            let body = "\(report) request=\(count)"
            let reply = "HTTP/1.1 200 OK\r\nContent-Length: \(body.utf8.count)\r\n"
                + (close ? "Connection: close\r\n" : "") + "\r\n" + body
            guard stream.write(reply), !close else { return }
        }
    }

    /// A server context for one epoch.
    private static func context(_ certificates: TLSConversationCertificates, requiresClientCertificate: Bool,
                                maximumTLS12: Bool) throws -> ServerTLSContext {
        let good = certificates.served[.good]!
        let made = try ServerTLSContext(certificate: good.certificate, key: good.key)
        let context = made.context
        let id = Array("tls-conversation".utf8)
        guard SSL_CTX_set_session_id_context(context, id, UInt32(id.count)) == 1 else {
            throw PeerError("cannot set the session id context")
        }
        if maximumTLS12, SSL_CTX_ctrl(context, SSL_CTRL_SET_MAX_PROTO_VERSION, Int(TLS1_2_VERSION), nil) != 1 {
            throw PeerError("cannot cap the server at TLS 1.2")
        }
        if requiresClientCertificate {
            guard SSL_CTX_load_verify_locations(context, certificates.caPath, nil) == 1 else {
                throw PeerError("cannot load the CA for client certificates")
            }
            SSL_CTX_set_verify(context, SSL_VERIFY_PEER | SSL_VERIFY_FAIL_IF_NO_PEER_CERT, nil)
        }
        return made
    }
}
