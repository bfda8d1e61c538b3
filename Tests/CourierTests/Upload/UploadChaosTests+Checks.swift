import Courier
import Foundation
import Testing

/// How ``UploadChaosTests`` judges each upload's outcome against what the server did with it.
extension UploadChaosTests {
    /// What any body source owes: a stream is iterated once, goes to the server once (on HTTP/1.1
    /// and HTTP/2 alike: a refused stream fails before a second stream is opened for it), is
    /// stored at most once, is not read after its request ended (one `next()` already decided on
    /// may begin as it ends), and was not read far ahead of what the server took while it held
    /// back (`ahead`, measured by the server).
    static func checkSource(_ upload: UploadChaos.Upload, visits: Int, stored: Int, ahead: Int?, http2: Bool, _ history: String) {
        guard case .stream(_, let largestChunk) = upload.source else { return }
        // A stream held for `100 Continue` on a stale connection goes once more: only its head went.
        let cutAtHead = switch upload.fault { case .cut(0), .drop(0): true; default: false }
        let headOnly = cutAtHead && upload.holdsBodyForContinue && !http2 ? 1 : 0
        #expect(upload.log.iterations <= 1 && visits <= 1 + headOnly && stored <= 1, "a stream went out again: \(history)")
        #expect(upload.log.readsAfterEnd <= 1, "the stream was read after its request ended: \(history)")
        switch upload.fault {
        case .slowRead, .stall:
            if let ahead {
                #expect(ahead <= aheadBound(http2: http2) + largestChunk, "the client read \(ahead) octets ahead: \(history)")
            }
        default:
            break
        }
    }

    /// Checks an HTTP/1.1 upload on the native transport by its documented rules.
    static func check(_ upload: UploadChaos.Upload, _ result: Result<HTTPResponse, HTTPConnectionError>,
                      _ visits: [UploadChaosHTTP1Peer.Visit], _ history: String) {
        #expect(result.error != .cancelled, "\(history)")
        guard let first = visits.first else {
            Issue.record("an upload the server never saw ended: \(history)")
            return
        }
        switch upload.fault {
        case .store, .slowRead, .refuse, .goAway:
            #expect(result.text == upload.answer && visits.count == 1, "\(history)")
        case .early(let status, _, _):
            // The server's answer stands, though the body was not all sent and the server's close
            // with the body unread reset the connection: the answer is read before the reset.
            expectEarly(result, status: status, upload, history)
            #expect(visits.count == 1, "\(history)")
        case .cut, .drop:
            // A reused connection closed before any answer is stale: an idempotent request (a PUT
            // of a body that can be sent again) goes again on a fresh connection, and so does one
            // whose body was still held for `100 Continue` (the server cannot have acted on it);
            // any other fails. After a `100 Continue` the server had begun to answer: the
            // connection was not stale.
            let answering = upload.expectsContinue && upload.fault.at != 0
            if answering {
                #expect(result.error == .connectionLost && visits.count == 1, "\(history)")
            } else if first.requestOnConnection > 1, upload.holdsBodyForContinue || (upload.method == .put && upload.source.isReplayable) {
                #expect(result.text == upload.answer && visits.count == 2, "\(history)")
                #expect(visits.count < 2 || visits[1].requestOnConnection == 1, "the retry went out on a used connection: \(history)")
            } else if first.requestOnConnection > 1 {
                #expect(result.error == .staleConnection && visits.count == 1, "\(history)")
            } else {
                #expect(result.error == .connectionLost && visits.count == 1, "\(history)")
            }
        case .stall:
            #expect(result.error == .timedOut && visits.count == 1, "\(history)")
        }
    }

    /// Checks an HTTP/2 upload by what the peer did with each of its streams; `dropped` when the
    /// peer dropped a connection, which may take streams it never read with it.
    static func check(_ upload: UploadChaos.Upload, _ result: Result<HTTPResponse, HTTPConnectionError>,
                      _ visits: [UploadChaosHTTP2Peer.Visit], dropped: Bool, _ history: String) {
        let treatments = visits.map(\.treatment)
        switch result {
        case .success(let response):
            if response.text == upload.earlyAnswer, case .early(200, _, _) = upload.fault {
                #expect(treatments.first == .answered(upload.earlyAnswer), "\(history)")
            } else {
                #expect(response.text == upload.answer && treatments.last == .answered(upload.answer), "\(history)")
            }
        case .failure(let error):
            switch error {
            case .unacceptableStatus:
                if case .early(let status, _, _) = upload.fault {
                    expectEarly(result, status: status, upload, history)
                } else {
                    Issue.record("\(history)")
                }
            case .bodyNotReplayable:
                #expect(!upload.source.isReplayable && treatments.contains(.refused), "\(history)")
            case .timedOut:
                // A stalled upload's short timeout (1 s) may also end it before the peer reached
                // the stall: the peer's one thread reads no frame while it holds another stream
                // still (up to 2 s on a loaded machine).
                let stalls = if case .stall = upload.fault { true } else { false }
                #expect(treatments.contains(.stalled) || stalls, "\(history)")
            case .connectionLost:
                let explained = treatments.contains(.reset) || treatments.contains(.lost)
                    || (dropped && !treatments.contains { if case .answered = $0 { true } else { false } })
                #expect(explained, "\(history)")
            default:
                Issue.record("\(history)")
            }
        }
        // A refused stream of a body that cannot be sent again fails: it is never sent empty.
        if !upload.source.isReplayable, treatments.first == .refused {
            #expect(result.error == .bodyNotReplayable || result.error == .cancelled, "\(history)")
        }
        // The server's early answer stands whatever comes after it.
        if case .answered(upload.earlyAnswer) = treatments.first, case .early(let status, _, _) = upload.fault {
            expectEarly(result, status: status, upload, history)
        }
    }

    /// Checks an upload on `URLSessionTransport`, whose retries are libcurl's: a stream is not
    /// supported (and not read); otherwise only the answer and the kind of failure are judged.
    static func checkLoosely(_ upload: UploadChaos.Upload, _ result: Result<HTTPResponse, HTTPConnectionError>,
                             _ visits: [UploadChaosHTTP1Peer.Visit], _ history: String) {
        if !upload.source.isReplayable {
            #expect(result.error == .unsupportedByTransport && visits.isEmpty && upload.log.iterations == 0, "\(history)")
            return
        }
        #expect(result.error != .cancelled && visits.count <= 2, "\(history)")
        switch upload.fault {
        case .store, .slowRead, .refuse, .goAway, .stall:
            #expect(result.text == upload.answer, "\(history)")
        case .early(let status, _, let closes):
            if closes, result.error != nil, result.error != .unacceptableStatus { return }
            expectEarly(result, status: status, upload, history)
        case .cut, .drop:
            if case .success = result {
                #expect(result.text == upload.answer && visits.count == 2, "\(history)")
            }
        }
    }

    /// The server's early answer: a `200` succeeds with its body, any other status fails
    /// validation carrying it.
    private static func expectEarly(_ result: Result<HTTPResponse, HTTPConnectionError>, status: Int,
                                    _ upload: UploadChaos.Upload, _ history: String) {
        if status == 200 {
            #expect(result.text == upload.earlyAnswer, "\(history)")
        } else {
            #expect(result.error == .unacceptableStatus && result.error?.response?.status.code == status, "\(history)")
        }
    }
}

extension Result where Success == HTTPResponse, Failure == HTTPConnectionError {
    /// The error, when it failed.
    var error: HTTPConnectionError? { if case .failure(let error) = self { error } else { nil } }
    /// The response's text, when it succeeded.
    var text: String? { if case .success(let response) = self { response.text } else { nil } }
}
