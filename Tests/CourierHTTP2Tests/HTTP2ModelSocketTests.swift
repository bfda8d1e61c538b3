@testable import CourierHTTP2
import Courier
import CourierTestServer
import CourierTestSupport
import Foundation
import Testing

@Suite("Native transport over HTTP/2 (h2c) against the RFC 9113 model peer")
struct HTTP2ModelSocketTests {
    /// A transport that speaks h2c by prior knowledge, without decompression or a proxy.
    static func transport() -> NativeTransport {
        var configuration = NativeTransport.Configuration(decompression: false)
        configuration.httpVersion = .http2PriorKnowledge
        configuration.proxy = .none
        return NativeTransport(configuration: configuration)
    }

    /// What the transport must return for `request`: its status, fields, trailers and body.
    static func check(_ response: HTTPResponse, against request: HTTP2ModelRequest, _ label: String) {
        #expect(response.status.code == request.status, "\(label): status")
        #expect(response.body == Data(request.body), "\(label): \(response.body.count) body octets, not the \(request.body.count) sent")
        for field in request.fields {
            #expect(response.headers[field.name] == field.value, "\(label): field \(field.name)")
        }
        for field in request.trailers {
            #expect(response.trailers[field.name] == field.value, "\(label): trailer \(field.name)")
        }
    }

    @Test("12 concurrent requests through a peer that starts with windows of 0 and 2 streams, changes both, refuses streams and sends GOAWAY: every response exact, refused and unprocessed streams sent again, windows and limits kept; a cancel resets its stream and the connection carries on")
    func conversation() async throws {
        let seed = SeededRandom.seed(default: 0x0680_9113)
        var random = SeededRandom(seed: seed)
        // Requests 0..<12 go at once; 12 is held (and cancelled); 13 follows the cancel. Two
        // responses of 2 MiB and uploads above 65,535 octets.
        var plan = (0..<14).map { _ in HTTP2ModelRequest.random(using: &random, bigBody: nil) }
        plan[3] = HTTP2ModelRequest.random(using: &random, bigBody: 2 << 20)
        plan[8] = HTTP2ModelRequest.random(using: &random, bigBody: 2 << 20)
        plan[5].upload = (0..<200_000).map { UInt8(truncatingIfNeeded: $0 &* 13) }
        let server = try HTTP2ModelServer(plan: plan, held: 12, seed: seed)
        defer { server.close() }
        let transport = Self.transport()
        defer { transport.shutdown() }
        let base = "http://127.0.0.1:\(server.port)"
        let requests = plan.indices.map { index in
            TransportRequest(method: plan[index].upload == nil ? .get : .post, url: URL(string: "\(base)/r\(index)")!,
                             body: Data(plan[index].upload ?? []), timeout: .seconds(20))
        }
        let results = await withTaskGroup(of: (Int, Result<HTTPResponse, HTTPConnectionError>).self) { group in
            for index in 0..<12 {
                group.addTask {
                    do throws(HTTPConnectionError) {
                        return (index, .success(try await transport.send(requests[index], observer: IgnoringTransportObserver())))
                    } catch {
                        return (index, .failure(error))
                    }
                }
            }
            return await group.reduce(into: [Int: Result<HTTPResponse, HTTPConnectionError>]()) { $0[$1.0] = $1.1 }
        }
        let hint = "seed 0x\(String(seed, radix: 16)) (replay with COURIER_TEST_SEED)"
        let unprocessed = server.report.unprocessed
        for index in 0..<12 {
            // The README: a request the server did not process goes again, at most 3 times,
            // then fails with connectionLost.
            switch (unprocessed[index, default: 0] > 3, results[index]) {
            case (false, .success(let response)?):
                Self.check(response, against: plan[index], "request \(index), \(hint)")
            case (true, .failure(let error)?):
                #expect(error == .connectionLost, "request \(index): \(error), \(hint)")
            default:
                Issue.record("request \(index), not processed \(unprocessed[index, default: 0]) times: \(String(describing: results[index])), \(hint)")
            }
        }
        // The cancel: the held request's stream is reset with CANCEL, and the next request goes
        // on the same connection.
        let heldTask = Task { try await transport.send(requests[12], observer: IgnoringTransportObserver()) }
        #expect(await eventually(timeout: .seconds(20)) { server.report.heldOpened }, "the held request never arrived")
        heldTask.cancel()
        let heldResult = await heldTask.result
        #expect((try? heldResult.get()) == nil, "the held request was answered")
        #expect(await eventually(timeout: .seconds(20)) { server.report.heldCancelled }, "no RST_STREAM(CANCEL) for the held request")
        let after = try await transport.send(requests[13], observer: IgnoringTransportObserver())
        Self.check(after, against: plan[13], "request 13 after the cancel, \(hint)")
        let report = server.report
        print("HTTP/2 model over a socket: \(report.connections) connections, \(report.refused) refused, \(report.goAways) GOAWAYs, unprocessed \(unprocessed), at most \(report.mostOpen) streams open")
        #expect(report.connectionOfRequest[13] == report.connectionOfRequest[12], "the cancel cost the connection")
        #expect(report.violations.isEmpty, "\(hint): \(report.violations.prefix(5))")
        for index in 0..<12 {
            let times = unprocessed[index, default: 0] > 3 ? 0 : 1
            #expect(report.served[index, default: 0] == times, "request \(index) answered \(report.served[index] ?? 0) times, \(hint)")
        }
        #expect(report.served[13] == 1)
        // The conversation reached what it is about.
        #expect(report.refused > 0 && report.goAways > 0, "\(hint): \(report.refused) refused, \(report.goAways) GOAWAYs")
        #expect(report.mostOpen <= 3)
    }
}
