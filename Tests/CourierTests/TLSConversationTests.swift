@testable import Courier
import CourierTestServer
import CourierTestSupport
import Foundation
import Testing

/// Seeded random TLS conversations over real sockets between native transports with different
/// TLS settings (trust, pins, resumption, client identity, minimum version;
/// ``TLSConversationClient``) and two in-process origins (``TLSConversationOrigin``) whose
/// certificate, client-certificate requirement and maximum version change between requests
/// (each change a new server context, or a return to an earlier one whose sessions resume again).
/// Requests go one at a time, or a few at once to different peers, on kept and new connections
/// to five names (three DNS names, a name two labels under a wildcard, an IP literal), all mapped
/// to 127.0.0.1. An independent model (``TLSConversationModel``) predicts each request's
/// ending, whether it ran on a kept connection, whether its new session was resumed and under
/// which version, and the idle connections of its pool afterwards. A failure names the seed and
/// step; `COURIER_TEST_SEED` replays it.
@Suite("TLS conversations", .enabled(if: TestCertificates.isAvailable, "openssl is needed for the TLS tests"))
struct TLSConversationTests {
    /// The names the requests use; all but the IP literal are mapped to 127.0.0.1.
    static let hosts = ["alpha.test", "beta.test", "x.wild.test", "a.b.wild.test", "127.0.0.1"]

    /// What a conversation met, so that the test can insist that it met enough.
    struct Tally {
        var resumed = 0
        var fullHandshakes = 0
        var kept = 0
        var concurrent = 0
        var errors: [String: Int] = [:]
    }

    @Test("16 conversations of 40 steps: every request ends, resumes and reuses connections as the model predicts")
    func randomConversations() async throws {
        let seed = SeededRandom.seed(default: 0x5EED_0025_7150)
        let certificates = try await TLSConversationCertificates.make()
        defer { certificates.remove() }
        let origins = try (0..<2).map { _ in try TLSConversationOrigin(certificates: certificates) }
        defer { origins.forEach { $0.stop() } }
        var tally = Tally()
        try await withLeakCheck { leaks in
            for conversation in 0..<16 {
                var random = SeededRandom(seed: seed, stream: conversation)
                let hint = "conversation \(conversation), \(SeededRandom(seed: seed).replayHint)"
                var epochs: [Int] = []
                for origin in origins {
                    origin.present(.good)
                    epochs.append(try origin.reconfigure(requiresClientCertificate: false, maximumTLS12: false))
                }
                var pool = TLSConversationClient.all.indices.map { $0 }
                var picked: [TLSConversationClient] = []
                for _ in 0..<4 { picked.append(TLSConversationClient.all[pool.remove(at: Int(random.next() % UInt64(pool.count)))]) }
                let transports = try picked.map { leaks.native(try configuration($0, certificates, origins)) }
                var model = TLSConversationModel(clients: picked, origins: origins.count)
                for (index, epoch) in epochs.enumerated() { model.servers[index].epoch = epoch }
                let firstEpochs = epochs
                for step in 0..<40 {
                    let where_ = "\(hint), step \(step)"
                    try await play(step: step, conversation: conversation, firstEpochs: firstEpochs, random: &random, model: &model,
                                   origins: origins, transports: transports, tally: &tally, context: where_)
                }
                transports.forEach { $0.shutdown() }
            }
        }
        // The conversations must have met what they are about.
        #expect(tally.resumed >= 10 && tally.fullHandshakes >= 20 && tally.kept >= 20 && tally.concurrent >= 10,
                "\(tally), \(SeededRandom(seed: seed).replayHint)")
        #expect(tally.errors.count >= 5, "\(tally.errors), \(SeededRandom(seed: seed).replayHint)")
    }

    /// One step: change an origin, or send one request, or a few at once to different peers.
    private func play(step: Int, conversation: Int, firstEpochs: [Int], random: inout SeededRandom, model: inout TLSConversationModel,
                      origins: [TLSConversationOrigin], transports: [NativeTransport], tally: inout Tally,
                      context: String) async throws {
        let roll = random.next() % 12
        let originIndex = Int(random.next() % UInt64(origins.count))
        switch roll {
        case 0, 1, 2:
            // Half the swaps go back to the good certificate, so that sessions live long enough to matter.
            let all = TLSConversationLeaf.allCases
            let leaf = random.next() % 2 == 0 ? .good : all[Int(random.next() % UInt64(all.count))]
            origins[originIndex].present(leaf)
            model.servers[originIndex].leaf = leaf
        case 3, 6:
            var server = model.servers[originIndex]
            let first = firstEpochs[originIndex]
            if random.next() % 3 == 0, server.epoch > first {
                // Back to an epoch of this conversation: its sessions resume again.
                server.epoch = first + Int(random.next() % UInt64(server.epoch - first))
                (server.requiresClientCertificate, server.maximumTLS12) = origins[originIndex].returnTo(epoch: server.epoch)
            } else {
                if random.next() % 2 == 0 { server.requiresClientCertificate.toggle() } else { server.maximumTLS12.toggle() }
                server.epoch = try origins[originIndex].reconfigure(requiresClientCertificate: server.requiresClientCertificate,
                                                                    maximumTLS12: server.maximumTLS12)
            }
            model.servers[originIndex] = server
        case 4, 5:
            // A few requests at once, each to a peer of its own, so that each one's prediction stands alone.
            var keys: [TLSConversationModel.PoolKey] = []
            for _ in 0..<(2 + Int(random.next() % 2)) {
                let key = Self.drawKey(&random, clients: transports.count, origins: origins.count)
                if !keys.contains(key) { keys.append(key) }
            }
            var planned: [(TLSConversationModel.PoolKey, Bool, TLSConversationModel.Prediction)] = []
            for key in keys {
                let close = random.next() % 2 == 0
                planned.append((key, close, model.request(key, close: close)))
            }
            let outcomes = await withTaskGroup(of: (Int, Result<String, HTTPConnectionError>).self) { group in
                for (index, (key, close, _)) in planned.enumerated() {
                    let url = url(key, close: close, origins: origins, tag: "c\(conversation)s\(step)r\(index)")
                    let transport = transports[key.client]
                    group.addTask { (index, await Self.send(transport, url)) }
                }
                var all: [Int: Result<String, HTTPConnectionError>] = [:]
                for await (index, outcome) in group { all[index] = outcome }
                return all
            }
            tally.concurrent += planned.count
            for (index, (key, close, prediction)) in planned.enumerated() {
                check(outcome: outcomes[index]!, prediction, key: key, model: model, tally: &tally,
                      context: "\(context) (at once, \(index)) \(model.clients[key.client]) → \(key.host) origin \(key.origin) \(model.servers[key.origin]) close \(close)")
            }
            for (key, _, _) in planned { try await expectPool(key, model: model, origins: origins, transports: transports, context: context) }
        default:
            let key = Self.drawKey(&random, clients: transports.count, origins: origins.count)
            let close = random.next() % 2 == 0
            let before = model.state(of: key)
            let prediction = model.request(key, close: close)
            let outcome = await Self.send(transports[key.client], url(key, close: close, origins: origins, tag: "c\(conversation)s\(step)"))
            check(outcome: outcome, prediction, key: key, model: model, tally: &tally,
                  context: "\(context) \(model.clients[key.client]) → \(key.host) origin \(key.origin) \(model.servers[key.origin]) close \(close), model before: \(before)")
            try await expectPool(key, model: model, origins: origins, transports: transports, context: context)
        }
    }

    /// A random client, host and origin (alpha.test more often than the others).
    private static func drawKey(_ random: inout SeededRandom, clients: Int, origins: Int) -> TLSConversationModel.PoolKey {
        // Two requests in three go to alpha.test, so that each peer meets several in a conversation.
        let host = random.next() % 3 != 0 ? hosts[0] : hosts[Int(random.next() % UInt64(hosts.count))]
        return .init(client: Int(random.next() % UInt64(clients)), host: host,
              origin: Int(random.next() % UInt64(origins)))
    }

    /// The URL of a request to `key`'s host and origin; `/close…` asks the origin to close after answering.
    private func url(_ key: TLSConversationModel.PoolKey, close: Bool, origins: [TLSConversationOrigin], tag: String) -> URL {
        URL(string: "https://\(key.host):\(origins[key.origin].port)/\(close ? "close" : "keep")/\(tag)")!
    }

    /// Sends a GET and returns the origin's report line, or the error.
    private static func send(_ transport: NativeTransport, _ url: URL) async -> Result<String, HTTPConnectionError> {
        do throws(HTTPConnectionError) {
            return .success(try await fetch(transport, url).text ?? "")
        } catch {
            return .failure(error)
        }
    }

    /// Compares what happened with the prediction.
    private func check(outcome: Result<String, HTTPConnectionError>, _ prediction: TLSConversationModel.Prediction,
                       key: TLSConversationModel.PoolKey, model: TLSConversationModel, tally: inout Tally, context: String) {
        switch outcome {
        case .failure(let error):
            tally.errors["\(error.kindName)", default: 0] += 1
            #expect(prediction.error == error, "\(context): predicted \(prediction), got \(error)")
        case .success(let report):
            let fields = Dictionary(report.split(separator: " ").compactMap { field -> (String, String)? in
                let parts = field.split(separator: "=", maxSplits: 1)
                return parts.count == 2 ? (String(parts[0]), String(parts[1])) : nil
            }, uniquingKeysWith: { first, _ in first })
            guard prediction.error == nil else {
                Issue.record("\(context): predicted \(prediction), got success: \(report)")
                return
            }
            if prediction.kept {
                tally.kept += 1
                #expect(fields["request"] != "1", "\(context): predicted a kept connection, got \(report)")
                return
            }
            if prediction.resumed { tally.resumed += 1 } else { tally.fullHandshakes += 1 }
            let server = model.servers[key.origin]
            let expected = "resumed=\(prediction.resumed ? 1 : 0) version=\(prediction.version) "
                + "sni=\(sni(key.host, resumedTLS12: prediction.resumed && prediction.version == "TLSv1.2")) client=\(server.requiresClientCertificate ? 1 : 0) request=1"
            #expect(report == expected, "\(context): predicted \(expected), got \(report)")
        }
    }

    /// The server name the origin reports: none for an IP literal (no SNI is sent), and none on
    /// a resumed TLS 1.2 session (OpenSSL's server then reports the session's name, which it
    /// keeps only for a server with a server-name callback).
    private func sni(_ host: String, resumedTLS12: Bool) -> String {
        host == "127.0.0.1" || resumedTLS12 ? "-" : host
    }

    /// Waits (bounded) until the pool of `key` holds exactly the idle connections the model
    /// expects and nothing else: a request that failed leaves no connection behind.
    private func expectPool(_ key: TLSConversationModel.PoolKey, model: TLSConversationModel, origins: [TLSConversationOrigin],
                            transports: [NativeTransport], context: String) async throws {
        let url = url(key, close: false, origins: origins, tag: "")
        let expected = model.idleConnections(key)
        var seen: NativeTransport.PoolSnapshot?
        for _ in 0..<1_000 {
            seen = await transports[key.client].poolSnapshot(for: url)
            if (seen?.connections ?? 0) == expected, (seen?.idle ?? 0) == expected { return }
            try await Task.sleep(for: .milliseconds(5))
        }
        Issue.record("\(context): the pool of \(key) holds \(String(describing: seen)), the model expects \(expected) idle connection(s)")
    }

    /// The native transport configuration of a client: its TLS options, no proxy, and every
    /// test name of both origins mapped to 127.0.0.1.
    private func configuration(_ client: TLSConversationClient, _ certificates: TLSConversationCertificates,
                               _ origins: [TLSConversationOrigin]) throws -> NativeTransport.Configuration {
        let identity: TLSOptions.ClientIdentity? = switch client.identity {
        case .none: nil
        case .signedByTestCA: try TLSOptions.ClientIdentity(certificateChainFile: certificates.clientA.certificate,
                                                            privateKeyFile: certificates.clientA.key)
        case .stranger: try TLSOptions.ClientIdentity(certificateChainFile: certificates.stranger.certificate,
                                                      privateKeyFile: certificates.stranger.key)
        }
        let pins: [TLSOptions.Pin] = switch client.pin {
        case .none: []
        case .firstKey: [.publicKeySHA256(certificates.firstKeyPin)]
        case .unusedKey: [.publicKeySHA256(certificates.unusedKeyPin)]
        }
        let options = TLSOptions(trustRoots: client.trust == .system ? .system : .pem(certificates.caPEM), pins: pins,
                                 minimumVersion: client.requiresTLS13 ? .tls1_3 : .tls1_2,
                                 verifiesCertificateChain: client.trust != .noChainCheck,
                                 resumesSessions: client.resumes, clientIdentity: identity)
        var configuration = NativeTransport.Configuration(tls: options)
        configuration.proxy = .none
        configuration.addressOverrides = try Self.hosts.dropLast().flatMap { host in
            try origins.map { try NativeTransport.AddressOverride(host: host, port: $0.port, addresses: ["127.0.0.1"]) }
        }
        return configuration
    }
}
