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
// STACK_OF(X509)'s accessors are function-like macros too.

/// sk_X509_num: the number of certificates in a stack (-1 for NULL).
static inline int courier_sk_X509_num(const STACK_OF(X509) *stack) {
    return sk_X509_num(stack);
}

/// sk_X509_value: the certificate at an index, or NULL.
static inline X509 *courier_sk_X509_value(const STACK_OF(X509) *stack, int index) {
    return sk_X509_value(stack, index);
}

/// sk_X509_new_null: an empty stack.
static inline STACK_OF(X509) *courier_sk_X509_new_null(void) {
    return sk_X509_new_null();
}

/// sk_X509_push: appends a certificate (the stack takes the caller's reference); 0 on failure.
static inline int courier_sk_X509_push(STACK_OF(X509) *stack, X509 *certificate) {
    return sk_X509_push(stack, certificate);
}

/// sk_X509_pop_free(stack, X509_free): frees a stack and drops its references.
static inline void courier_sk_X509_free_all(STACK_OF(X509) *stack) {
    sk_X509_pop_free(stack, X509_free);
}
#endif
