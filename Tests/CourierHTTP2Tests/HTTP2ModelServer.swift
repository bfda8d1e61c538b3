@testable import CourierHTTP2
import CourierTestServer
import CourierTestSupport
import Foundation
import Synchronization
#if canImport(Glibc)
import Glibc
#endif

/// An h2c server on 127.0.0.1 (port 0) whose every connection is an `HTTP2ModelPeer` in its
/// crossing mode, driven over the socket by a thread of its own: legal under RFC 9113, its
/// moves and their timing at random. The first connection is the adversarial one: it starts
/// with SETTINGS_INITIAL_WINDOW_SIZE 0 and a stream limit of 2, changes both mid-conversation,
/// refuses requests 1 and 6 and two more streams at random and ends with GOAWAY naming the last stream it answered (neither once
/// the held request arrived); the later ones
/// only split and time their answers at random. The request `held` is never answered (the
/// test cancels it). What the peers saw is in `report`.
final class HTTP2ModelServer: Sendable {
    /// What the server's connections saw.
    struct Report: Sendable {
        /// Frames of the client's that broke RFC 9113 or the plan.
        var violations: [String] = []
        /// How many times each request's response was sent to its end.
        var served: [Int: Int] = [:]
        /// How many times each request reached a connection that did not process it (refused,
        /// above a GOAWAY's last stream id, or opened after it).
        var unprocessed: [Int: Int] = [:]
        /// Connections accepted.
        var connections = 0
        /// The connection each request's head last arrived on.
        var connectionOfRequest: [Int: Int] = [:]
        /// Whether the held request's head arrived, and whether the client reset it with CANCEL.
        var heldOpened = false
        var heldCancelled = false
        /// REFUSED_STREAMs and GOAWAYs sent, and the most streams a connection had open.
        var refused = 0
        var goAways = 0
        var mostOpen = 0
    }

    let port: Int
    private let listener: Int32
    private let plan: [HTTP2ModelRequest]
    private let held: Int
    private let seed: UInt64
    private let state = Mutex(Report())
    private let descriptors = Mutex<[Int32]>([])

    /// Starts listening; connections are served as `plan` says, with moves from `seed`.
    init(plan: [HTTP2ModelRequest], held: Int, seed: UInt64) throws {
        (listener, port) = try LoopbackPort.listening(backlog: 16)
        self.plan = plan
        self.held = held
        self.seed = seed
        let thread = Thread { [self] in acceptLoop() }
        thread.start()
    }

    /// What the connections saw so far.
    var report: Report { state.withLock { $0 } }

    /// Stops accepting and shuts every connection down (their threads then end).
    func close() {
        Glibc.shutdown(listener, Int32(SHUT_RDWR))
        descriptors.withLock { for fd in $0 { Glibc.shutdown(fd, Int32(SHUT_RDWR)) } }
    }

    deinit {
        Glibc.close(listener)
    }

    private func acceptLoop() {
        while true {
            let fd = accept(listener, nil, nil)
            guard fd >= 0 else { return }
            var on: Int32 = 1
            setsockopt(fd, Int32(IPPROTO_TCP), TCP_NODELAY, &on, socklen_t(MemoryLayout<Int32>.size))
            descriptors.withLock { $0.append(fd) }
            let index = state.withLock { report in
                defer { report.connections += 1 }
                return report.connections
            }
            let worker = Thread { [self] in
                serve(fd, index: index)
                descriptors.withLock { list in
                    list.removeAll { $0 == fd }
                    Glibc.shutdown(fd, Int32(SHUT_RDWR))
                    Glibc.close(fd)
                }
            }
            worker.start()
        }
    }

    /// One connection: reads what the client wrote (checked by the peer), then makes a random
    /// move, until the client closes or 30 s pass.
    private func serve(_ fd: Int32, index: Int) {
        var peer = HTTP2ModelPeer(plan: plan, crossing: true)
        var random = SeededRandom(seed: seed, stream: index)
        let adversarial = index == 0
        var connection = ModelSocket(fd: fd)
        let clock = ContinuousClock()
        let deadline = clock.now + .seconds(30)
        // The client's preface and SETTINGS first.
        while peer.clientSettingsToAck == 0, clock.now < deadline {
            guard let bytes = connection.read(waitingMilliseconds: 100) else { return }
            peer.read(bytes)
        }
        let settings = adversarial
            ? [HTTP2Setting(.initialWindowSize, 0), HTTP2Setting(.maxConcurrentStreams, 2)]
            : [HTTP2Setting(.maxConcurrentStreams, UInt32.random(in: 1...3, using: &random))]
        connection.write(peer.opening(settings))
        var refusals = adversarial ? 2 : 0
        var unprocessedSeen = 0
        // Requests 1 and 6 are refused the first time they reach the adversarial connection.
        var refuseOnSight: Set<Int> = adversarial ? [1, 6] : []
        var answeredUpTo: UInt32 = 0
        var served = 0
        while clock.now < deadline {
            let busy = !peer.streams.isEmpty
            guard let bytes = connection.read(waitingMilliseconds: busy ? Int32.random(in: 0...2, using: &random) : 20) else { break }
            peer.read(bytes)
            var open = peer.streams.keys.sorted()
            state.withLock { report in
                report.violations += peer.violations
                report.mostOpen = max(report.mostOpen, peer.openCount)
                for id in open { report.connectionOfRequest[peer.streams[id]!.request] = index }
                for request in peer.unprocessed.dropFirst(unprocessedSeen) { report.unprocessed[request, default: 0] += 1 }
                if open.contains(where: { peer.streams[$0]!.request == held }) { report.heldOpened = true }
                if peer.clientCancels.contains(where: { peer.cancelledInFlight[$0]?.request == held }) { report.heldCancelled = true }
            }
            peer.violations.removeAll()
            unprocessedSeen = peer.unprocessed.count
            // Once the held request is here the conversation is about the cancel: no more
            // refusals or GOAWAY on this connection.
            if open.contains(where: { peer.streams[$0]!.request >= held }) { refusals = 0; served = -1_000 }
            peer.noticeCancels()
            // After GOAWAY's streams are done the client closes; the peer waits for that.
            if peer.goAwayLast != nil, peer.streams.isEmpty { continue }
            var output = peer.acknowledgeSettings()
            if let id = open.first(where: { refuseOnSight.contains(peer.streams[$0]!.request) && !peer.streams[$0]!.answered }) {
                refuseOnSight.remove(peer.streams[id]!.request)
                state.withLock { $0.refused += 1 }
                output += peer.reset(id, .refusedStream)
                open = peer.streams.keys.sorted()
            }
            switch Int.random(in: 0..<100, using: &random) {
            case 0..<50:
                let answerable = open.filter { peer.streams[$0]!.request != held }
                guard let id = answerable.randomElement(using: &random) else { break }
                let request = peer.streams[id]!.request
                guard let (bytes, ended) = peer.respond(id, using: &random) else { break }
                answeredUpTo = max(answeredUpTo, id)
                output += bytes
                if ended {
                    served += 1
                    state.withLock { $0.served[request, default: 0] += 1 }
                }
            case 50..<80:
                // Windows for the uploads: a random share of what each stream still needs.
                var need = 0
                for id in open {
                    let stream = peer.streams[id]!
                    let left = (plan[stream.request].upload?.count ?? 0) - stream.upload.count
                    need += left
                    if left > stream.receiveWindow, Bool.random(using: &random) {
                        output += peer.windowUpdate(id, Int.random(in: 1...(left - stream.receiveWindow), using: &random))
                    }
                }
                if need > peer.receiveConnectionWindow {
                    output += peer.windowUpdate(0, Int.random(in: 1...(need - peer.receiveConnectionWindow), using: &random))
                }
            case 80..<85 where adversarial:
                let size = [0, 100, 16_384, 65_535, 200_000].randomElement(using: &random)!
                output += peer.settings([HTTP2Setting(.initialWindowSize, UInt32(size)),
                                         HTTP2Setting(.maxConcurrentStreams, UInt32.random(in: 1...3, using: &random))])
            case 85..<88:
                output += peer.ping(random.next())
            case 88..<96 where refusals > 0:
                guard let id = open.filter({ !peer.streams[$0]!.answered }).randomElement(using: &random) else { break }
                refusals -= 1
                state.withLock { $0.refused += 1 }
                output += peer.reset(id, .refusedStream)
            case 96..<100 where adversarial && peer.goAwayLast == nil && served >= 3:
                state.withLock { $0.goAways += 1 }
                output += peer.goAway(last: answeredUpTo, code: .noError)
            default:
                break
            }
            connection.write(output)
        }
        state.withLock { report in
            for request in peer.unprocessed.dropFirst(unprocessedSeen) { report.unprocessed[request, default: 0] += 1 }
        }
    }
}
