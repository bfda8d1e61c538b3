import COpenSSL

extension TLSClientSession {
    /// OpenSSL's certificate callback (`SSL_CTX_set_cert_cb`), installed by every ``TLSContext``.
    /// On a client it runs when the server's CertificateRequest arrives, with or without a
    /// configured identity, so the session knows that the server asked for a certificate.
    ///
    /// Returns 1: go on with the handshake (with the context's identity, or with none).
    static let certificateRequestedCallback: @convention(c) (OpaquePointer?, UnsafeMutableRawPointer?) -> Int32 = { ssl, _ in
        guard let ssl, let owner = SSL_get_ex_data(ssl, TLSClientSession.ownerIndex) else { return 1 }
        Unmanaged<TLSClientSession>.fromOpaque(owner).takeUnretainedValue().serverRequestedCertificate = true
        return 1
    }

    /// The alerts (RFC 8446 §6; RFC 5246 §7.2) a server sends about a client certificate.
    private enum CertificateAlert {
        static let handshakeFailure: Int32 = 40
        static let aboutTheCertificate: Set<Int32> = [
            42, // bad_certificate
            43, // unsupported_certificate
            44, // certificate_revoked
            45, // certificate_expired
            46, // certificate_unknown
            48, // unknown_ca
            49, // access_denied
            51, // decrypt_error (the CertificateVerify signature)
        ]
        static let certificateRequired: Int32 = 116
    }

    /// The client-certificate error behind a fatal alert from the server, if that is what it is.
    ///
    /// - `certificate_required` (TLS 1.3) always means the server wanted a certificate.
    /// - After the server asked for a certificate, a certificate alert or `handshake_failure`
    ///   means it wanted one (when none is configured) or refused the one sent.
    ///
    /// - Parameter reasons: the reasons of OpenSSL's error queue (an alert received is
    ///   `SSL_AD_REASON_OFFSET` plus the alert's code).
    /// - Returns: ``TLSError/clientCertificateRequired``, ``TLSError/clientCertificateRejected``
    ///   (with the alert in the detail), or `nil`.
    func clientCertificateError(reasons: (first: Int32, last: Int32)) -> TLSError? {
        let offset = Int32(SSL_AD_REASON_OFFSET)
        let alerts = [reasons.first, reasons.last].map { $0 - offset }
        guard let alert = alerts.first(where: {
            $0 == CertificateAlert.certificateRequired || $0 == CertificateAlert.handshakeFailure
                || CertificateAlert.aboutTheCertificate.contains($0)
        }) else { return nil }
        let name = SSL_alert_desc_string_long(alert).map { String(cString: $0) } ?? "alert \(alert)"
        if alert == CertificateAlert.certificateRequired
            || (serverRequestedCertificate && configuration.clientIdentity == nil) {
            return TLSError.clientCertificateRequired.with(
                detail: "the server asked for a client certificate and ended the connection with \"\(name)\"")
        }
        guard serverRequestedCertificate else { return nil }
        return TLSError.clientCertificateRejected.with(
            detail: "the server answered the client certificate with \"\(name)\" (alert \(alert))")
    }
}
