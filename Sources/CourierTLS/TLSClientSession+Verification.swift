import COpenSSL
import Foundation

extension TLSClientSession {
    /// Sets SNI (for DNS names only) and, when both chain and host name
    /// verification are on, the name OpenSSL checks during chain verification.
    ///
    /// - Throws: ``TLSError/invalidConfiguration`` if OpenSSL rejects the name.
    func configureServerName() throws(TLSError) {
        if !serverNameIsIPAddress {
            guard OpenSSL.setServerNameIndication(ssl, verificationName) else {
                throw TLSError.invalidConfiguration.with(
                    detail: "OpenSSL rejected the server name for SNI: \(OpenSSL.drainErrorQueue())")
            }
        }
        guard configuration.verifyCertificate, configuration.verifyHostname else { return }
        guard let parameters = SSL_get0_param(ssl) else {
            throw TLSError.internalError.with(detail: "the session has no verification parameters")
        }
        let accepted: Bool
        if serverNameIsIPAddress {
            accepted = X509_VERIFY_PARAM_set1_ip_asc(parameters, verificationName) == 1
        } else {
            X509_VERIFY_PARAM_set_hostflags(parameters, Self.hostCheckFlags)
            accepted = X509_VERIFY_PARAM_set1_host(parameters, verificationName, verificationName.utf8.count) == 1
        }
        guard accepted else {
            throw TLSError.invalidConfiguration.with(
                detail: "OpenSSL rejected the server name for verification: \(OpenSSL.drainErrorQueue())")
        }
    }

    /// Whether the session checks the leaf itself (``checkLeaf(_:)``): there are pins, or the
    /// host name is checked while the chain is not.
    var needsLeafCheck: Bool {
        !configuration.pins.isEmpty || (configuration.verifyHostname && !configuration.verifyCertificate)
    }

    /// The leaf checks again once the handshake ended, against the certificate of the session:
    /// a resumed session's handshake carries no certificate, so its checks happen here, against
    /// the certificate of the handshake that created it. (A full handshake checked the same
    /// certificate when it arrived, ``verifyPresentedCertificate(_:)``.)
    ///
    /// - Throws: ``TLSError/hostnameMismatch`` or ``TLSError/pinMismatch``.
    func verifyAfterHandshake() throws(TLSError) {
        guard needsLeafCheck else { return }
        guard let certificate = SSL_get1_peer_certificate(ssl) else {
            throw TLSError.handshakeFailed.with(detail: "the server presented no certificate")
        }
        defer { X509_free(certificate) }
        try checkLeaf(certificate)
    }

    /// The checks that OpenSSL does not do: the host name when chain verification is off, and
    /// the pins.
    ///
    /// - Parameter certificate: the server's leaf certificate.
    /// - Throws: ``TLSError/hostnameMismatch`` or ``TLSError/pinMismatch``.
    func checkLeaf(_ certificate: OpaquePointer) throws(TLSError) {
        let needsHostCheck = configuration.verifyHostname && !configuration.verifyCertificate
        if needsHostCheck && !Self.certificate(certificate, names: verificationName, isIPAddress: serverNameIsIPAddress) {
            let kind = serverNameIsIPAddress ? "IP address" : "host name"
            throw TLSError.hostnameMismatch.with(
                detail: "the certificate does not name the \(kind) \(verificationName)")
        }
        if !configuration.pins.isEmpty {
            try checkPins(on: certificate)
        }
    }

    private static func certificate(_ certificate: OpaquePointer, names name: String, isIPAddress: Bool) -> Bool {
        if isIPAddress {
            return X509_check_ip_asc(certificate, name, 0) == 1
        }
        return X509_check_host(certificate, name, name.utf8.count, hostCheckFlags, nil) == 1
    }

    /// How a host name is matched: wildcards only as a whole leftmost label, and
    /// only against subjectAltName DNS names, never the subject's common name
    /// (RFC 6125 §6.4.4; browsers stopped reading it long ago).
    private static let hostCheckFlags = UInt32(X509_CHECK_FLAG_NO_PARTIAL_WILDCARDS | X509_CHECK_FLAG_NEVER_CHECK_SUBJECT)

    private func checkPins(on certificate: OpaquePointer) throws(TLSError) {
        var certificateDigest: [UInt8]?
        var publicKeyDigest: [UInt8]?
        for pin in configuration.pins {
            switch pin {
            case .certificateSHA256(let expected):
                if certificateDigest == nil {
                    certificateDigest = OpenSSL.derEncoding { i2d_X509(certificate, $0) }.map { Digest.sha256($0) }
                }
                if let certificateDigest, certificateDigest.elementsEqual(expected) { return }
            case .publicKeySHA256(let expected):
                if publicKeyDigest == nil, let key = X509_get_X509_PUBKEY(certificate) {
                    publicKeyDigest = OpenSSL.derEncoding { i2d_X509_PUBKEY(key, $0) }.map { Digest.sha256($0) }
                }
                if let publicKeyDigest, publicKeyDigest.elementsEqual(expected) { return }
            }
        }
        throw TLSError.pinMismatch.with(
            detail: "none of the \(configuration.pins.count) configured pin(s) matches the leaf certificate")
    }

    /// Classifies a failed `SSL_do_handshake`.
    ///
    /// OpenSSL's verify result is consulted only when chain verification is on:
    /// without it the chain is not verified (``verifyChain(_:)``), so a failed
    /// verification is never why the handshake failed.
    ///
    /// - Parameter code: the result of `SSL_get_error`.
    /// - Returns: the error to throw, with OpenSSL's verify result and error queue.
    func handshakeError(sslError code: Int32) -> TLSError {
        if let presentedCertificateFailure {
            OpenSSL.clearErrorQueue()
            return presentedCertificateFailure
        }
        let verifyResult = configuration.verifyCertificate ? SSL_get_verify_result(ssl) : Int(X509_V_OK)
        let reasons = OpenSSL.peekErrorReasons()
        let queue = OpenSSL.drainErrorQueue()
        let queueText = queue.isEmpty ? "" : "; OpenSSL: \(queue)"
        if verifyResult != Int(X509_V_OK) {
            let text = "\(OpenSSL.verifyErrorString(verifyResult)) (verify result \(verifyResult))\(queueText)"
            return Self.verificationError(verifyResult).with(detail: text, verifyResult: verifyResult)
        }
        if let clientCertificateError = clientCertificateError(reasons: reasons) {
            return clientCertificateError.with(detail: clientCertificateError.detail + queueText)
        }
        let versionReasons: Set<Int32> = [SSL_R_UNSUPPORTED_PROTOCOL, SSL_R_TLSV1_ALERT_PROTOCOL_VERSION,
                                          SSL_R_NO_PROTOCOLS_AVAILABLE, SSL_R_VERSION_TOO_LOW]
        if versionReasons.contains(reasons.first) || versionReasons.contains(reasons.last) {
            return TLSError.protocolVersionUnsupported.with(
                detail: "minimum allowed is \(configuration.minimumVersion)\(queueText)")
        }
        if reasons.last == SSL_R_UNEXPECTED_EOF_WHILE_READING || (code == SSL_ERROR_SYSCALL && queue.isEmpty) {
            return TLSError.handshakeFailed.with(detail: "the server closed the connection during the handshake")
        }
        if reasons.last == SSL_R_WRONG_VERSION_NUMBER || reasons.last == SSL_R_PACKET_LENGTH_TOO_LONG {
            return TLSError.handshakeFailed.with(detail: "the server does not speak TLS\(queueText)")
        }
        return TLSError.handshakeFailed.with(detail: "SSL error \(code)\(queueText)")
    }

    /// Classifies a failed `SSL_read_ex`.
    ///
    /// - Parameter code: the result of `SSL_get_error`.
    /// - Returns: the error to throw.
    func readError(sslError code: Int32) -> TLSError {
        let reasons = OpenSSL.peekErrorReasons()
        let queue = OpenSSL.drainErrorQueue()
        if reasons.last == SSL_R_UNEXPECTED_EOF_WHILE_READING || (code == SSL_ERROR_SYSCALL && queue.isEmpty) {
            return TLSError.uncleanShutdown.with(detail: "the server closed the connection without close_notify")
        }
        // Under TLS 1.3 the server judges the client certificate after the client's handshake ended.
        if let clientCertificateError = clientCertificateError(reasons: reasons) {
            return clientCertificateError
        }
        return TLSError.protocolError.with(detail: "SSL error \(code)" + (queue.isEmpty ? "" : "; OpenSSL: \(queue)"))
    }

    /// Maps an OpenSSL certificate verification result (`X509_V_ERR_*`) to an error kind.
    ///
    /// - Parameter result: the value of `SSL_get_verify_result`.
    /// - Returns: the matching kind, without detail.
    static func verificationError(_ result: Int) -> TLSError {
        switch Int32(truncatingIfNeeded: result) {
        case X509_V_ERR_CERT_HAS_EXPIRED:
            .expiredCertificate
        case X509_V_ERR_CERT_NOT_YET_VALID:
            .notYetValidCertificate
        case X509_V_ERR_HOSTNAME_MISMATCH, X509_V_ERR_IP_ADDRESS_MISMATCH:
            .hostnameMismatch
        case X509_V_ERR_UNABLE_TO_GET_ISSUER_CERT_LOCALLY, X509_V_ERR_UNABLE_TO_GET_ISSUER_CERT,
             X509_V_ERR_SELF_SIGNED_CERT_IN_CHAIN, X509_V_ERR_DEPTH_ZERO_SELF_SIGNED_CERT,
             X509_V_ERR_UNABLE_TO_VERIFY_LEAF_SIGNATURE, X509_V_ERR_CERT_UNTRUSTED,
             X509_V_ERR_CERT_REJECTED:
            .untrustedCertificate
        default:
            .invalidCertificate
        }
    }
}
