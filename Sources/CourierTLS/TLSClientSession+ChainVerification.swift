import COpenSSL

extension TLSClientSession {
    /// OpenSSL's chain verification (`SSL_CTX_set_cert_verify_callback`), installed by every
    /// ``TLSContext``; it runs when the server's certificates arrive.
    ///
    /// Returns what ``verifyPresentedCertificate(_:)`` returns for the session that owns the
    /// handshake.
    static let chainVerificationCallback: @convention(c) (OpaquePointer?, UnsafeMutableRawPointer?) -> Int32 = { storeContext, _ in
        guard let storeContext else { return 0 }
        guard let ssl = X509_STORE_CTX_get_ex_data(storeContext, SSL_get_ex_data_X509_STORE_CTX_idx()),
              let owner = SSL_get_ex_data(OpaquePointer(ssl), TLSClientSession.ownerIndex) else {
            return X509_verify_cert(storeContext)
        }
        return Unmanaged<TLSClientSession>.fromOpaque(owner).takeUnretainedValue().verifyPresentedCertificate(storeContext)
    }

    /// Everything the session checks on the server's certificate, as soon as it arrives: the
    /// chain (``verifyChain(_:)``), then the host name when the chain is not verified and the
    /// pins (``checkLeaf(_:)``). So a server that fails a pin or the name is refused before the
    /// client sends anything more: never its client certificate (a TLS 1.2 client sends it
    /// before the server's Finished, a TLS 1.3 client before its own handshake ends).
    ///
    /// A leaf that fails those checks fails the verification with
    /// `X509_V_ERR_APPLICATION_VERIFICATION`, and the session keeps the error
    /// (``presentedCertificateFailure``) that ``handshakeError(sslError:)`` then reports.
    ///
    /// - Parameter storeContext: the `X509_STORE_CTX` that OpenSSL set up for the handshake.
    /// - Returns: 1 when every check passed; otherwise 0, or `X509_verify_cert`'s result.
    func verifyPresentedCertificate(_ storeContext: OpaquePointer) -> Int32 {
        let chainResult = verifyChain(storeContext)
        guard chainResult == 1, needsLeafCheck, let leaf = X509_STORE_CTX_get0_cert(storeContext) else { return chainResult }
        do {
            try checkLeaf(leaf)
            return 1
        } catch {
            presentedCertificateFailure = error
            X509_STORE_CTX_set_error(storeContext, X509_V_ERR_APPLICATION_VERIFICATION)
            return 0
        }
    }

    /// Verifies the server's chain, or finds that the context verified the same chain for the
    /// same name a short while ago (``VerifiedChainCache``).
    ///
    /// - With chain verification off, nothing is verified: the handshake would go on whatever
    ///   the answer, and the session checks what it was asked to (``verifyAfterHandshake()``).
    /// - On a cache hit the verification's result is the cached chain (with this handshake's
    ///   leaf) and no error: the handshake's verify result and verified chain are what a fresh
    ///   verification would leave. OpenSSL's record of the matched name
    ///   (`SSL_get0_peername`) stays empty; Courier does not read it.
    /// - When the verification depends on more than the cache's key (revocation lists, a
    ///   verify callback, neither of which Courier sets), OpenSSL verifies without the cache.
    /// - Otherwise OpenSSL verifies it (`X509_verify_cert`), and a chain that verified is kept.
    ///
    /// - Parameter storeContext: the `X509_STORE_CTX` that OpenSSL set up for the handshake.
    /// - Returns: 1 when the chain is trusted or not being verified; otherwise
    ///   `X509_verify_cert`'s result, with the reason in the store context.
    func verifyChain(_ storeContext: OpaquePointer) -> Int32 {
        guard configuration.verifyCertificate else { return 1 }
        guard let cache = verifiedChains, Self.dependsOnlyOnKey(storeContext, ssl: ssl),
              let key = VerifiedChainStore<VerifiedChain>.Key(presentedTo: storeContext, serverName: verificationName,
                                                              isIPAddress: serverNameIsIPAddress) else {
            return X509_verify_cert(storeContext)
        }
        if let chain = cache.chain(for: key), let leaf = X509_STORE_CTX_get0_cert(storeContext),
           let stack = chain.stack(leaf: leaf) {
            X509_STORE_CTX_set0_verified_chain(storeContext, stack)
            X509_STORE_CTX_set_error(storeContext, X509_V_OK)
            reusedVerifiedChain = true
            return 1
        }
        let result = X509_verify_cert(storeContext)
        if result == 1, X509_STORE_CTX_get_error(storeContext) == X509_V_OK,
           let verified = X509_STORE_CTX_get0_chain(storeContext), let chain = VerifiedChain(copying: verified) {
            cache.insert(chain, for: key)
        }
        return result
    }

    /// Whether a verification in `storeContext` depends only on the cache's key and the
    /// context's fixed settings: no revocation lists to consult, no verify callback to run.
    private static func dependsOnlyOnKey(_ storeContext: OpaquePointer, ssl: OpaquePointer) -> Bool {
        guard SSL_get_verify_callback(ssl) == nil, let parameters = X509_STORE_CTX_get0_param(storeContext) else {
            return false
        }
        let revocationFlags = UInt(X509_V_FLAG_CRL_CHECK | X509_V_FLAG_CRL_CHECK_ALL)
        return X509_VERIFY_PARAM_get_flags(parameters) & revocationFlags == 0
    }
}
