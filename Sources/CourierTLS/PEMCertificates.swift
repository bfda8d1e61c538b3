import COpenSSL
import Foundation

/// Reads the certificates of a PEM bundle (one or more `-----BEGIN CERTIFICATE-----` blocks),
/// for the trust store and for a client certificate chain.
enum PEMCertificates {
    /// Parses every certificate block of a PEM bundle, in order.
    ///
    /// - Parameters:
    ///   - pem: the bundle.
    ///   - what: what the bundle is, for the error ("the PEM trust bundle").
    /// - Returns: one owned `X509` reference per certificate (free each with `X509_free`); never empty.
    /// - Throws: ``TLSError/invalidConfiguration`` when the bundle is empty, too large, holds a
    ///   damaged block, or holds no certificate.
    static func read(_ pem: Data, what: String) throws(TLSError) -> [OpaquePointer] {
        guard !pem.isEmpty, pem.count <= Int(Int32.max) else {
            throw TLSError.invalidConfiguration.with(detail: "\(what) is empty or too large")
        }
        ERR_clear_error()
        let certificates: [OpaquePointer]? = pem.withUnsafeBytes { bytes -> [OpaquePointer]? in
            guard let bio = BIO_new_mem_buf(bytes.baseAddress, Int32(bytes.count)) else { return nil }
            defer { BIO_free(bio) }
            var certificates: [OpaquePointer] = []
            // Bounded by the input: every iteration consumes at least one PEM block.
            while let certificate = PEM_read_bio_X509(bio, nil, nil, nil) {
                certificates.append(certificate)
            }
            // The loop ends with "no start line" at the end of the input; any
            // other error means a damaged certificate block.
            guard OpenSSL.peekErrorReasons().last == PEM_R_NO_START_LINE, !certificates.isEmpty else {
                certificates.forEach { X509_free($0) }
                return nil
            }
            return certificates
        }
        guard let certificates else {
            let queue = OpenSSL.drainErrorQueue()
            throw TLSError.invalidConfiguration.with(
                detail: "\(what) holds no readable certificate" + (queue.isEmpty ? "" : " (\(queue))"))
        }
        ERR_clear_error()
        return certificates
    }
}
