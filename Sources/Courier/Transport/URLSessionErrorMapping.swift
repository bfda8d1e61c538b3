import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// Turns what URLSession reports into Courier's errors, for ``URLSessionTransport``.
///
/// On Linux, URLSession runs on libcurl and folds most of libcurl's failures into two codes:
/// `NSURLErrorUnknown` (-1) and `unsupportedURL` (-1002, libcurl's "unsupported protocol", which
/// is also what a response that is not HTTP/1.x produces). Only libcurl's message tells them
/// apart, so for those two codes the message decides; every other code maps by itself.
enum URLSessionErrorMapping {
    /// The Courier error for a URLSession error.
    /// - Parameters:
    ///   - error: the error the task completed with.
    ///   - headReceived: whether a response head had arrived before it.
    /// - Returns: the error, with URLSession's description as its detail and `error` underneath.
    static func map(_ error: any Error, headReceived: Bool) -> HTTPConnectionError {
        guard let urlError = error as? URLError else { return .transportFailed.with(underlying: error) }
        if urlError.code == .badServerResponse, !headReceived {
            // libcurl's "Empty reply from server": the server closed before answering.
            return .connectionLost.with(detail: "the server closed the connection before answering", underlying: urlError)
        }
        let message = urlError.localizedDescription
        if !headReceived, message.lowercased().contains("out of memory") {
            // libcurl's code for a response head over its own size limit.
            return .headTooLarge.with(detail: "libcurl refused the response head (\(message))", underlying: urlError)
        }
        let kind: HTTPConnectionError = switch urlError.code {
        case .cancelled: .cancelled
        case .timedOut: .timedOut
        case .cannotFindHost, .dnsLookupFailed: .cannotResolveHost
        case .cannotConnectToHost, .notConnectedToInternet: .cannotConnect
        case .networkConnectionLost: .connectionLost
        case .badServerResponse, .cannotParseResponse: .badResponse
        case .serverCertificateUntrusted, .serverCertificateHasUnknownRoot: .untrustedCertificate
        case .serverCertificateHasBadDate, .serverCertificateNotYetValid: .expiredCertificate
        case .secureConnectionFailed: .tlsFailed
        case .clientCertificateRejected: .clientCertificateRejected
        case .clientCertificateRequired: .clientCertificateRequired
        case .badURL: .invalidURL
        // The URL was checked before sending: libcurl's "unsupported protocol" here means the
        // response was not HTTP/1.x ("Received HTTP/0.9", "Unsupported response code").
        case .unsupportedURL: .badResponse
        case .dataLengthExceedsMaximum: .bodyTooLarge
        case .cannotDecodeContentData, .cannotDecodeRawData: .decompressionFailed
        default: kind(ofCurlMessage: message) ?? .transportFailed
        }
        return kind.with(detail: message, underlying: urlError)
    }

    /// The kind of a libcurl failure that URLSession reported as `NSURLErrorUnknown`, from
    /// libcurl's message; `nil` when the message is not one Courier knows.
    static func kind(ofCurlMessage message: String) -> HTTPConnectionError? {
        let text = message.lowercased()
        if text.contains("unencoding") || text.contains("content encoding") { return .decompressionFailed }
        if text.contains("outstanding read data") || text.contains("bytes remaining") || text.contains("connection reset") || text.contains("recv failure") {
            return .connectionLost
        }
        let malformed = ["header", "chunk", "content-length", "weird server reply", "invalid", "malformed"]
        if malformed.contains(where: text.contains) { return .badResponse }
        return nil
    }
}
