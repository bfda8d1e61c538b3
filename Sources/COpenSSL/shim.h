#ifndef COURIER_COPENSSL_SHIM_H
#define COURIER_COPENSSL_SHIM_H
#include <openssl/ssl.h>
#include <openssl/err.h>
#include <openssl/x509.h>
#include <openssl/x509v3.h>
#include <openssl/x509_vfy.h>
#include <openssl/evp.h>
#include <openssl/pem.h>
#include <openssl/bio.h>
#include <openssl/rand.h>
#include <openssl/crypto.h>
#include <openssl/hmac.h>

// OpenSSL option bits are defined with a function-like macro (SSL_OP_BIT) that
// Swift cannot import; these helpers expose the few that CourierTLS needs.

/// SSL_OP_NO_RENEGOTIATION: refuse TLS 1.2 renegotiation requests.
static inline uint64_t courier_ssl_op_no_renegotiation(void) {
    return SSL_OP_NO_RENEGOTIATION;
}

/// SSL_OP_NO_COMPRESSION: never use TLS-level compression (CRIME).
static inline uint64_t courier_ssl_op_no_compression(void) {
    return SSL_OP_NO_COMPRESSION;
}
#endif
