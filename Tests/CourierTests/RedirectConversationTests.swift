import Courier
import CourierTestServer
import Foundation
import Testing

/// Redirect following over real sockets: conversations of concurrent requests (GET, HEAD,
/// DELETE, and POST and PUT with a data, file or stream body; with or
/// without credentials; under a random ``RedirectPolicy``; some with a deadline) against origins
/// that play a script per request: chains of 301/302/303/307/308 whose `Location` is absolute,
/// in capitals, an absolute path, `../`, a query, scheme-relative, with or without a fragment, to
/// the same origin, the same server by another name, another server or (native transport) an
/// https origin; a final 200, a redirect without `Location`, one with an unusable `Location` (not
/// http(s), no host, unparsable, port 0), or a cycle back to an earlier step.
///
/// ``RedirectConversationModel`` predicts from the documented rules every request the servers
/// see (method, body, `Content-Type`, credentials, the default header, the hook's field), every
/// question the policy's hook is asked, and how the request ends: its 200, the redirect itself, or
/// the exact error with the redirect it carries; and the redirects the metrics count. The servers
/// must have seen exactly those requests (so no credential reached another origin, and a 307/308
/// resent the exact body), and the request must end so, once (``runCase``). A request whose
/// deadline passes during its slow last answer must end with `deadlineExceeded` after a prefix of
/// those requests.
///
/// `URLSessionTransport` runs the same conversations without the https origin (it has no way to
/// trust the test CA); a request with a stream body must fail there with `unsupportedByTransport`
/// before anything is sent, as documented. The redirect rules are the pipeline's, the same on both.
@Suite("Redirects: random conversations")
struct RedirectConversationTests {
    typealias Call = RedirectConversation.Call
    typealias Model = RedirectConversationModel

    /// What the conversations met, all told: each must have happened for the test to mean anything.
    struct Met: CustomStringConvertible {
        var answered = 0, delivered = 0, tooMany = 0, cycles = 0, refused = 0, notReplayable = 0, deadlines = 0
        var credentialsDropped = 0, bodiesResent = 0, downgrades = 0, hooks = 0, unsupported = 0

        var description: String {
            "answered \(answered), delivered \(delivered), tooManyRedirects \(tooMany), redirectCycle \(cycles), redirectRefused \(refused), bodyNotReplayable \(notReplayable), deadlines \(deadlines), credentials dropped \(credentialsDropped), bodies resent \(bodiesResent), downgrades \(downgrades), hook calls \(hooks), streams URLSession refused \(unsupported)"
        }
    }

    @Test("10 conversations of 12 requests under random redirect scripts and policies: each request makes exactly the hops the documented rules predict, with the method, body and credentials they say, and ends as they say, once",
          arguments: TransportUnderTest.allCases)
    func randomConversations(_ transport: TransportUnderTest) async throws {
        let seed = SeededRandom.seed(default: 0x5EED_0005_0401)
        let native = transport == .native
        let server = try await RedirectConversationServer(secure: native)
        defer { server.shutdown() }
        let files = FileManager.default.temporaryDirectory.appendingPathComponent("redirect-conversation-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: files, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: files) }
        var met = Met()
        for conversation in 0..<10 {
            var random = SeededRandom(seed: seed, stream: conversation)
            let context = "conversation \(conversation), \(SeededRandom(seed: seed).replayHint)"
            // The last request of each conversation ends its chain with each unusable Location in turn.
            let calls = (0..<12).map { index in
                Self.draw(id: 100 * conversation + index, &random, secure: native,
                          unusable: index == 11 ? Self.unusable[conversation % Self.unusable.count] : nil)
            }
            server.load(calls)
            let hookCalls = Locked<[Int: [Model.HookCall]]>([:])
            let requests = try calls.map { try Self.request(for: $0, server, files: files, hookCalls: hookCalls) }
            let caPEM = server.caPEM
            let outcomes = try await runCase(transport, on: server.base, requests, configure: { configuration in
                configuration.validation = .acceptAll
                configuration.headers.set(RedirectConversation.defaultHeader.value, for: RedirectConversation.defaultHeader.name)
                if native, let caPEM {
                    var options = NativeTransport.Configuration()
                    options.tls = TLSOptions(trustRoots: .pem(caPEM))
                    configuration.transport = NativeTransport(configuration: options)
                }
            }, during: { caseContext, _ in
                for port in server.otherPorts { caseContext.leaks.watch(port: port) }
            })
            for (call, outcome) in zip(calls, outcomes) {
                let prediction = Model.predict(call)
                let seen = server.visits(of: call.id)
                let asked = hookCalls.withLock { $0[call.id] ?? [] }
                let story = "\(call): expected \(prediction.visits) and \(prediction.ending) after \(prediction.redirects) redirects, hook asked \(prediction.hookCalls); the servers saw \(seen), the hook was asked \(asked), the client got \(outcome.result); \(context)"
                #expect(!seen.contains { $0.place.origin != call.start && !$0.credentials.isEmpty }, "a credential reached another origin: \(story)")
                #expect(!seen.contains { $0.place.origin != .base && $0.defaultHeader }, "the default header left the base origin: \(story)")
                if !native, call.body.isStream {
                    // As documented: URLSessionTransport sends no stream, and says so before sending anything.
                    met.unsupported += 1
                    #expect(outcome.error == .unsupportedByTransport && seen.isEmpty, "\(story)")
                    continue
                }
                if call.deadline?.mustFire == true {
                    met.deadlines += 1
                    #expect(outcome.error == .deadlineExceeded, "the deadline passed during the slow last answer: \(story)")
                    #expect(seen.count <= prediction.visits.count && zip(seen, prediction.visits).allSatisfy { $0 == $1 }, "\(story)")
                    continue
                }
                #expect(seen == prediction.visits, "the hops differ: \(story)")
                #expect(asked == prediction.hookCalls, "the hook was asked otherwise: \(story)")
                Self.checkEnding(outcome, prediction, call, story)
                met.count(call, prediction)
            }
        }
        #expect(met.answered > 0 && met.delivered > 0 && met.tooMany > 0 && met.cycles > 0 && met.refused > 0
                    && (met.notReplayable > 0 || !native) && (met.unsupported > 0 || native) && met.deadlines > 0 && met.credentialsDropped > 0
                    && met.bodiesResent > 0 && (met.downgrades > 0 || !native) && met.hooks > 0,
                "the conversations missed a situation: \(met)")
    }

    /// Checks that the request ended as predicted: its 200 (from the right place, with the
    /// redirects counted), the redirect itself, or the predicted error carrying that redirect.
    static func checkEnding(_ outcome: CaseOutcome, _ prediction: Model.Prediction, _ call: Call, _ story: String) {
        switch prediction.ending {
        case .answered(let place):
            let response = outcome.response
            #expect(response?.status.code == 200, "\(story)")
            #expect(response?.url.path == place.path(id: call.id) && response?.url.query == place.queryStep.map { "s=\($0)" },
                    "the response names another URL: \(story)")
            #expect(response?.metrics?.redirects == prediction.redirects, "\(story)")
            if call.method != .head, let response {
                let echo = try? response.decode([String: String].self)
                #expect(echo?["step"] == "\(place.step)" && echo?["id"] == "\(call.id)", "\(story)")
            }
        case .delivered(let status):
            #expect(outcome.response?.status.code == status, "\(story)")
            #expect(outcome.response?.metrics?.redirects == prediction.redirects, "\(story)")
        case .failed(let error, let status):
            #expect(outcome.error == error && outcome.error?.response?.status.code == status, "\(story)")
        }
    }

    /// `Location`s no request can follow: not http(s), unparsable, without a host, port 0.
    static let unusable = ["ftp://files.example/rc", "http://[::1", "mailto:someone@example.com", "http:///rc/no-host", "http://127.0.0.1:0/rc"]

    /// Draws one request and its script; with `unusable`, the script ends with that `Location`
    /// and the request follows the connection's policy.
    static func draw(id: Int, _ random: inout SeededRandom, secure: Bool, unusable forced: String? = nil) -> Call {
        typealias Origin = RedirectConversation.Origin
        let origins: [Origin] = secure ? Origin.allCases : [.base, .baseByName, .other]
        let start = random.next() % 10 < 6 ? .base : origins[Int(random.next() % UInt64(origins.count))]
        let method: HTTPRequest.Method = [.get, .get, .head, .delete, .post, .post, .post, .put, .put, .put][Int(random.next() % 10)]
        var body = RedirectConversation.BodyKind.none
        if method == .post || method == .put {
            let bytes = Data((0..<(1 + Int(random.next() % 1_500))).map { _ in UInt8(truncatingIfNeeded: random.next()) })
            switch random.next() % 4 {
            case 0: body = .file(bytes)
            case 1 where !start.isSecure: body = .stream(bytes, lengthKnown: random.next() % 2 == 0)
            default: body = .data(bytes)
            }
        }
        var policy: RedirectConversation.Policy = switch random.next() % 16 {
        case 0..<4: .connectionDefault
        case 4..<6: .follow(limit: Int(random.next() % 5))
        case 6: .doNotFollow
        case 7..<9: .downgrade
        case 9: .stopAt(Int(random.next() % 3))
        case 10: .refuseAt(Int(random.next() % 3))
        case 11..<13: .tag
        default: .sameOriginOnly
        }
        // The planned chain: hops to steps 1…n, each on an origin drawn as it goes; the last step ends it.
        let hops = random.next() % 12 == 0 ? 11 + Int(random.next() % 2) : Int(random.next() % 6)
        var planned = [start]
        var answers: [RedirectConversation.Answer] = []
        for step in 0..<hops {
            planned.append(random.next() % 2 == 0 ? planned[step] : origins[Int(random.next() % UInt64(origins.count))])
            answers.append(redirect(from: planned[step], to: step + 1, on: planned[step + 1], &random))
        }
        let status = RedirectConversation.statuses[Int(random.next() % 5)]
        switch random.next() % 10 {
        case 0..<6: answers.append(.ok(delay: nil))
        case 6: answers.append(.noLocation(status: status))
        case 7: answers.append(.unusable(status: status, location: unusable[Int(random.next() % UInt64(unusable.count))]))
        default:
            let back = Int(random.next() % UInt64(hops + 1))
            answers.append(redirect(from: planned[hops], to: back, on: planned[back], &random))
        }
        if let forced {
            answers[hops] = .unusable(status: status, location: forced)
            policy = .connectionDefault
        }
        var call = Call(id: id, start: start, method: method, body: body, credentials: random.next() % 3 != 0, policy: policy,
                        deadline: nil, answers: answers)
        switch random.next() % 6 {
        case 0:
            // A slow last answer that outlasts the deadline by far, when the request ends with one.
            if case .answered(let place) = Model.predict(call).ending {
                call.answers[place.step] = .ok(delay: .milliseconds(400))
                call.deadline = (.milliseconds(80), mustFire: true)
            }
        case 1: call.deadline = (.seconds(30), mustFire: false)
        default: break
        }
        return call
    }

    /// A redirect, with a random status, from a page on `current` to `step` on `target`, its
    /// `Location` written in a form that can name it from there, with a fragment now and then.
    static func redirect(from current: RedirectConversation.Origin, to step: Int, on target: RedirectConversation.Origin,
                         _ random: inout SeededRandom) -> RedirectConversation.Answer {
        let forms = RedirectConversation.Form.usable(from: current, to: target)
        return .redirect(status: RedirectConversation.statuses[Int(random.next() % 5)], step: step, origin: target,
                         form: forms[Int(random.next() % UInt64(forms.count))],
                         fragment: random.next() % 5 == 0 ? "f\(random.next() % 100)" : nil)
    }

    /// The request `call` makes: its headers, body, policy (with a hook that logs what it is
    /// asked into `hookCalls`) and deadline.
    static func request(for call: Call, _ server: RedirectConversationServer, files: URL,
                        hookCalls: Locked<[Int: [Model.HookCall]]>) throws -> HTTPRequest {
        let place = RedirectConversation.Place(origin: call.start, pathStep: 0, queryStep: nil)
        let target = call.start == .base ? place.path(id: call.id) : server.url(place, id: call.id)
        var headers: HTTPHeaders = ["X-Custom": "c\(call.id)"]
        if call.credentials {
            for (name, value) in RedirectConversation.credentialFields(id: call.id) { headers.set(value, for: name) }
        }
        let body: HTTPRequest.Body
        switch call.body {
        case .none: body = .none
        case .data(let data): body = .data(data)
        case .file(let data):
            let file = files.appendingPathComponent("body-\(call.id)")
            try data.write(to: file)
            body = try HTTPRequest.Body.file(file)
        case .stream(let data, let lengthKnown):
            let (chunks, continuation) = AsyncStream.makeStream(of: Data.self)
            for start in stride(from: 0, to: data.count, by: 500) { continuation.yield(data[start..<min(data.count, start + 500)]) }
            continuation.finish()
            body = .stream(chunks, length: lengthKnown ? Int64(data.count) : nil)
        }
        var request = HTTPRequest(call.method, target, headers: headers, body: body)
        request.deadline = call.deadline?.0
        let id = call.id
        let log: @Sendable (RedirectHop) -> Void = { hop in
            hookCalls.withLock {
                $0[id, default: []].append(Model.HookCall(count: hop.count, crossesOrigin: hop.crossesOrigin, method: hop.request.method.rawValue,
                                                          authorization: hop.request.headers["Authorization"] != nil))
            }
        }
        switch call.policy {
        case .connectionDefault: break
        case .follow(let limit): request.redirectPolicy = .follow(limit: limit)
        case .doNotFollow: request.redirectPolicy = .doNotFollow
        case .downgrade: request.redirectPolicy = .follow(allowingInsecureDowngrade: true)
        case .stopAt(let count): request.redirectPolicy = .follow { hop in log(hop); return hop.count == count ? .stop : .follow }
        case .refuseAt(let count): request.redirectPolicy = .follow { hop in log(hop); return hop.count == count ? .refuse : .follow }
        case .tag:
            request.redirectPolicy = .follow { hop in
                log(hop)
                var changed = hop.request
                changed.headers.set("\(hop.count)", for: "X-Hooked")
                return .followWith(changed)
            }
        case .sameOriginOnly: request.redirectPolicy = .sameOriginOnly
        }
        return request
    }
}

extension RedirectConversationTests.Met {
    /// Counts what `call`, ended as `prediction` says, exercised.
    mutating func count(_ call: RedirectConversation.Call, _ prediction: RedirectConversationModel.Prediction) {
        switch prediction.ending {
        case .answered: answered += 1
        case .delivered: delivered += 1
        case .failed(let error, _):
            switch error {
            case .tooManyRedirects: tooMany += 1
            case .redirectCycle: cycles += 1
            case .redirectRefused: refused += 1
            case .bodyNotReplayable: notReplayable += 1
            default: break
            }
        }
        let visits = prediction.visits
        if call.credentials, visits.contains(where: { $0.credentials.isEmpty }) { credentialsDropped += 1 }
        if !call.body.isNone, !call.body.isStream, visits.dropFirst().contains(where: { !$0.body.isEmpty }) { bodiesResent += 1 }
        if zip(visits, visits.dropFirst()).contains(where: { $0.place.origin.isSecure && !$1.place.origin.isSecure }) { downgrades += 1 }
        hooks += prediction.hookCalls.count
    }
}
