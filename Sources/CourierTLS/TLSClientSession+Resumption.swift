import COpenSSL

extension TLSClientSession {
    /// The `SSL` ex-data slot that points back at the session owning an `SSL` object, so that
    /// OpenSSL's session callback (a C function, without context) finds it.
    static let ownerIndex: Int32 = CRYPTO_get_ex_new_index(CRYPTO_EX_INDEX_SSL, 0, nil, nil, nil, nil)

    /// OpenSSL's new-session callback (`SSL_CTX_sess_set_new_cb`), installed by ``TLSContext``
    /// when resumption is on. It runs inside `SSL_do_handshake` (TLS 1.2) or `SSL_read` (TLS 1.3
    /// tickets), always on the thread that is driving the session.
    ///
    /// Returns 1: the callback keeps the reference OpenSSL handed it (the session cache frees it).
    static let sessionIssuedCallback: @convention(c) (OpaquePointer?, OpaquePointer?) -> Int32 = { ssl, session in
        guard let ssl, let session else { return 0 }
        guard let owner = SSL_get_ex_data(ssl, TLSClientSession.ownerIndex) else {
            SSL_SESSION_free(session)
            return 1
        }
        Unmanaged<TLSClientSession>.fromOpaque(owner).takeUnretainedValue().sessionIssued(owning: session)
        return 1
    }

    /// Offers the newest cached session for the peer, if resumption is on and one is usable.
    func offerCachedSession() {
        guard let sessionCache else { return }
        guard let cached = sessionCache.take(for: peer) else { return }
        // SSL_set_session takes a reference of its own; `cached` releases the cache's.
        offeredResumption = SSL_set_session(ssl, cached.pointer) == 1
    }

    /// A session the server issued: cached at once after a verified handshake, held back until
    /// the checks pass while the handshake is still running.
    private func sessionIssued(owning session: OpaquePointer) {
        guard let sessionCache else {
            SSL_SESSION_free(session)
            return
        }
        if handshakeComplete {
            sessionCache.insert(owning: session, for: peer)
        } else {
            unverifiedSessions.append(CachedSession(owning: session))
        }
    }

    /// Moves the sessions issued during the handshake into the cache, now that every check passed,
    /// after telling the cache whether the session offered (if any) was resumed.
    func cacheVerifiedSessions() {
        guard let sessionCache else { return }
        if offeredResumption {
            sessionCache.offerEnded(resumed: SSL_session_reused(ssl) == 1, for: peer)
        }
        guard !unverifiedSessions.isEmpty else { return }
        for cached in unverifiedSessions {
            SSL_SESSION_up_ref(cached.pointer)
            sessionCache.insert(owning: cached.pointer, for: peer)
        }
        unverifiedSessions.removeAll()
    }

    /// Keeps the session of a connection that ended without close_notify resumable.
    ///
    /// `SSL_free` marks the session of a connection that did not send close_notify as not
    /// resumable, and that session is the one in the cache (it is reference-counted, not
    /// copied). HTTP connections often end that way (a `Connection: close` response, a server
    /// that closed an idle connection) and RFC 8446 ties a ticket to no connection. A session
    /// that failed with anything but an unclean shutdown has already dropped its peer's
    /// sessions (``forgetPeerSessions()``), so nothing learnt from it stays cached.
    func keepSessionResumable() {
        guard sessionCache != nil, failure == nil || failure == .uncleanShutdown else { return }
        SSL_set_shutdown(ssl, SSL_get_shutdown(ssl) | SSL_SENT_SHUTDOWN)
    }

    /// Drops the peer's cached sessions and those of this handshake: its certificate failed a
    /// check, or the handshake failed, so nothing learnt from that peer is offered again.
    func forgetPeerSessions() {
        unverifiedSessions.removeAll()
        sessionCache?.removeAll(for: peer)
    }
}
