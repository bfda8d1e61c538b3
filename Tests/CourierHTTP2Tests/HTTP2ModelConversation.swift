@testable import CourierHTTP2
import CourierTestServer

/// One seeded conversation between an `HTTP2ConnectionStateMachine` (driven as a client would:
/// requests queued while no stream is available, bodies handed over in random chunks, a cancel
/// now and then) and an `HTTP2ModelPeer`. After every move the model's prediction is compared
/// with what the machine reported: each stream's outcome (the exact response, or the failure
/// RFC 9113 gives it, or nothing after a cancel) arrives in the move that decides it, the open
/// and available stream counts follow the limit, SETTINGS and PINGs are acknowledged, and the
/// connection closes (without error) only once a GOAWAY's remaining streams are done. A
/// final phase opens every window and answers everything: a conversation that stops moving is
/// a stall. Problems are collected in `failures`, each naming the step.
struct HTTP2ModelConversation {
    /// What the machine reported for one stream.
    struct Observation {
        var head: (status: Int, fields: [HPACKHeaderField])?
        var body: [UInt8] = []
        var trailers: [HPACKHeaderField] = []
        var end: HTTP2ModelOutcome?
    }

    private var random: SeededRandom
    private(set) var machine: HTTP2ConnectionStateMachine
    private(set) var peer: HTTP2ModelPeer
    private let plan: [HTTP2ModelRequest]
    /// The number of requests in the conversation.
    var requestCount: Int { plan.count }
    /// Requests not yet on a stream, in order.
    private var queue: [Int]
    private var requestOfStream: [UInt32: Int] = [:]
    /// Request body octets handed to the machine per stream, and whether the last went.
    private var handed: [UInt32: Int] = [:]
    private var handedAll: Set<UInt32> = []
    private var expected: [UInt32: HTTP2ModelOutcome] = [:]
    private var observed: [UInt32: Observation] = [:]
    private var compared: Set<UInt32> = []
    private var closes = 0
    private var step = 0
    /// Everything that went against the model, with the step.
    private(set) var failures: [String] = []
    /// Counts that show what the conversation reached.
    private(set) var responses = 0, failedStreams = 0, cancels = 0, goAways = 0, peakOpen = 0

    /// A conversation of 1 to 10 requests, the client's and the peer's settings at random;
    /// one in twenty carries three responses of 1 MiB, one in ten of the others pads every
    /// DATA frame heavily.
    init(seed: UInt64) {
        var random = SeededRandom(seed: seed)
        let big = Int.random(in: 0..<20, using: &random) == 0
        let plan = (0..<(big ? 3 : Int.random(in: 1...10, using: &random))).map { _ in
            HTTP2ModelRequest.random(using: &random, bigBody: big ? 1 << 20 : nil)
        }
        var configuration = HTTP2ConnectionStateMachine.Configuration()
        configuration.initialWindowSize = [16_384, 65_535, 1 << 20].randomElement(using: &random)!
        configuration.connectionWindowSize = [65_535, 200_000, 8 << 20].randomElement(using: &random)!
        self.random = random
        self.plan = plan
        queue = Array(plan.indices)
        machine = HTTP2ConnectionStateMachine(configuration: configuration)
        peer = HTTP2ModelPeer(plan: plan, paddingHeavy: !big && Int.random(in: 0..<10, using: &self.random) == 0)
    }

    // MARK: - Running

    /// Plays up to `steps` random moves, then the final phase.
    mutating func run(steps: Int) {
        process(machine.start())
        var settings: [HTTP2Setting] = []
        if Bool.random(using: &random) {
            settings.append(HTTP2Setting(.initialWindowSize, [0, 100, 65_535].randomElement(using: &random)!))
        }
        if Bool.random(using: &random) {
            settings.append(HTTP2Setting(.maxConcurrentStreams, UInt32.random(in: 1...3, using: &random)))
        }
        deliver(peer.opening(settings))
        openQueued()
        while step < steps, !machine.isClosed, failures.isEmpty {
            step += 1
            move()
            openQueued()
            check()
        }
        finish()
    }

    /// One random move of the peer or of the client.
    private mutating func move() {
        let roll = Int.random(in: 0..<100, using: &random)
        let open = peer.streams.keys.sorted()
        switch roll {
        case 0..<35:
            let candidates = open + peer.cancelledInFlight.keys.sorted()
            guard let id = candidates.randomElement(using: &random) else { return }
            respond(id)
        case 35..<50:
            guard let id = requestOfStream.keys.filter({ uploadLeft($0) != nil }).sorted().randomElement(using: &random) else { return }
            handUpload(id, all: false)
        case 50..<60:
            let id: UInt32 = Bool.random(using: &random) ? 0 : open.randomElement(using: &random) ?? 0
            let window = id == 0 ? peer.receiveConnectionWindow : peer.streams[id]!.receiveWindow
            let increment = Int.random(in: 1...70_000, using: &random)
            guard window + increment <= 0x7fff_ffff else { return }
            deliver(peer.windowUpdate(id, increment))
        case 60..<65:
            var settings: [HTTP2Setting] = []
            if Bool.random(using: &random) {
                settings.append(HTTP2Setting(.initialWindowSize, [0, 1, 100, 16_384, 65_535, 200_000].randomElement(using: &random)!))
            }
            if Bool.random(using: &random) {
                settings.append(HTTP2Setting(.maxConcurrentStreams, UInt32.random(in: 0...4, using: &random)))
            }
            deliver(peer.settings(settings))
            if !peer.unackedSettings.isEmpty { fail("the client did not acknowledge SETTINGS \(settings)") }
        case 65..<70:
            deliver(peer.ping(random.next()))
            if !peer.pendingPings.isEmpty { fail("the client did not answer PING") }
        case 70..<72:
            // REFUSED_STREAM is legal only before the server did anything with the stream.
            guard let id = open.filter({ !peer.streams[$0]!.answered }).randomElement(using: &random) else { return }
            expected[id] = .failed(.refusedStream, retryable: true)
            deliver(peer.reset(id, .refusedStream))
        case 72..<75:
            guard let id = open.filter({ peer.streams[$0]!.headSent }).randomElement(using: &random) else { return }
            let code: HTTP2ErrorCode = Bool.random(using: &random) ? .cancel : .internalError
            expected[id] = .failed(code, retryable: false)
            deliver(peer.reset(id, code))
        case 75:
            goAway()
        case 76..<78:
            guard let id = requestOfStream.keys.filter({ expected[$0] == nil }).sorted().randomElement(using: &random) else { return }
            cancel(id)
        case 78..<81:
            peer.noticeCancels()
        default:
            guard let id = open.randomElement(using: &random) else { return }
            respond(id)
        }
    }

    /// The peer's next response frames on `id`; their END_STREAM decides the outcome.
    private mutating func respond(_ id: UInt32) {
        guard let (bytes, ended) = peer.respond(id, using: &random) else { return }
        if ended, expected[id] == nil, let index = requestOfStream[id] {
            let request = plan[index]
            expected[id] = .response(status: request.status, fields: request.fields, body: request.body, trailers: request.trailers)
        }
        deliver(bytes)
    }

    /// GOAWAY naming a last stream id no lower than any stream the peer answered (the others
    /// are dropped as unprocessed, as when their HEADERS crossed the GOAWAY), never higher than
    /// an earlier one (§6.8).
    private mutating func goAway() {
        let answered = peer.streams.filter { $0.value.answered }.keys.max() ?? 0
        var choices = [answered] + peer.streams.keys.filter { $0 >= answered }
        if let earlier = peer.goAwayLast { choices = choices.filter { $0 <= earlier } }
        guard let last = choices.randomElement(using: &random) else { return }
        let code: HTTP2ErrorCode = Bool.random(using: &random) ? .noError : .enhanceYourCalm
        for id in requestOfStream.keys where id > last && expected[id] == nil {
            expected[id] = .failed(code, retryable: true)
        }
        goAways += 1
        deliver(peer.goAway(last: last, code: code))
    }

    /// The client cancels `id`: one RST_STREAM(CANCEL), no event.
    private mutating func cancel(_ id: UInt32) {
        expected[id] = .cancelled
        observed[id, default: Observation()].end = .cancelled
        let before = peer.clientCancels.count
        let actions = machine.cancelStream(id)
        process(actions)
        if peer.clientCancels.count != before + 1 || peer.clientCancels.last != id {
            fail("cancelling stream \(id) did not write RST_STREAM(CANCEL) for it: \(actions)")
        }
        cancels += 1
    }

    /// How much of the stream's upload the client has not handed over, or `nil` when all went.
    private func uploadLeft(_ id: UInt32) -> Int? {
        guard let index = requestOfStream[id], let upload = plan[index].upload, !handedAll.contains(id),
              machine.isOpen(id) else { return nil }
        return upload.count - handed[id, default: 0]
    }

    /// Hands the machine the next chunk of the stream's upload (or all of it).
    private mutating func handUpload(_ id: UInt32, all: Bool) {
        guard let left = uploadLeft(id), let index = requestOfStream[id], let upload = plan[index].upload else { return }
        let count = all ? left : Swift.min(left, [0, 1, 1_000, 40_000].randomElement(using: &random)!)
        let start = handed[id, default: 0]
        let last = count == left && (all || Bool.random(using: &random))
        handed[id] = start + count
        if last { handedAll.insert(id) }
        process(machine.sendBody(streamID: id, Array(upload[start..<(start + count)]), endStream: last))
    }

    /// Opens streams for queued requests while the machine has room.
    private mutating func openQueued() {
        while let index = queue.first, machine.availableStreamCount > 0 {
            guard let (id, actions) = machine.openStream(headers: plan[index].requestFields(index: index),
                                                         endStream: plan[index].upload == nil) else {
                fail("openStream refused with \(machine.availableStreamCount) streams available")
                return
            }
            queue.removeFirst()
            requestOfStream[id] = index
            process(actions)
            peakOpen = Swift.max(peakOpen, machine.openStreamCount)
        }
    }

    /// The peer's octets to the machine, cut in up to three pieces.
    private mutating func deliver(_ bytes: [UInt8]) {
        peer.noteSent(bytes)
        var cuts = (0..<Int.random(in: 0...2, using: &random)).map { _ in Int.random(in: 0...bytes.count, using: &random) }.sorted()
        cuts.append(bytes.count)
        var start = 0
        for end in cuts {
            process(machine.receive(Array(bytes[start..<end])))
            start = end
        }
    }

    /// Carries out the machine's actions: writes go to the peer, events are recorded.
    private mutating func process(_ actions: [HTTP2ConnectionAction]) {
        for action in actions {
            switch action {
            case .write(let bytes):
                peer.read(bytes)
            case .responseHead(let id, let status, let fields):
                record(id) { observation in
                    if observation.head != nil { return "a second head" }
                    observation.head = (status, fields)
                    return nil
                }
            case .responseData(let id, let bytes):
                record(id) { observation in
                    if observation.head == nil { return "data before the head" }
                    observation.body += bytes
                    return nil
                }
            case .responseTrailers(let id, let fields):
                record(id) { observation in
                    observation.trailers = fields
                    return nil
                }
            case .streamFinished(let id):
                record(id) { observation in
                    guard let head = observation.head else { return "finished without a head" }
                    observation.end = .response(status: head.status, fields: head.fields, body: observation.body, trailers: observation.trailers)
                    return nil
                }
            case .streamFailed(let id, let failure):
                record(id) { observation in
                    observation.end = .failed(failure.code, retryable: failure.retryable)
                    return nil
                }
            case .closeConnection(let error):
                closes += 1
                if let error { fail("the connection failed against a legal peer: \(error)") }
            }
        }
    }

    /// Applies one event to a stream's observation; an event for a stream never opened or
    /// already ended is a failure.
    private mutating func record(_ id: UInt32, _ change: (inout Observation) -> String?) {
        guard requestOfStream[id] != nil else { return fail("an event for stream \(id), which the client never opened") }
        var observation = observed[id, default: Observation()]
        if let end = observation.end { return fail("stream \(id): an event after it ended (\(end))") }
        if let problem = change(&observation) { fail("stream \(id): \(problem)") }
        observed[id] = observation
    }

    private mutating func fail(_ message: String) {
        failures.append("step \(step): \(message)\n  last frames:\n    " + peer.trace.suffix(16).joined(separator: "\n    "))
    }

    // MARK: - Checks

    /// Compares the model with the machine after a move.
    private mutating func check() {
        for violation in peer.violations { fail("RFC 9113: \(violation)") }
        peer.violations.removeAll()
        for id in requestOfStream.keys.sorted() where !compared.contains(id) {
            switch (expected[id], observed[id]?.end) {
            case (nil, nil):
                continue
            case (let model?, nil):
                fail("stream \(id): the model says \(model), the machine reported nothing")
            case (nil, let machine?):
                fail("stream \(id): the machine reported \(machine), the model expects nothing yet")
            case (let model?, let machine?):
                if model != machine { fail("stream \(id): the model says \(model), the machine reported \(machine)") }
            }
            compared.insert(id)
            if case .response = expected[id] { responses += 1 } else if case .failed = expected[id] { failedStreams += 1 }
        }
        let open = requestOfStream.keys.filter { expected[$0] == nil }.count
        if machine.openStreamCount != open { fail("the machine has \(machine.openStreamCount) streams open, the model \(open)") }
        let available = machine.isClosed || peer.goAwayLast != nil ? 0 : Swift.max(0, peer.ackedMaxStreams - open)
        if machine.availableStreamCount != available {
            fail("the machine offers \(machine.availableStreamCount) streams, the model \(available)")
        }
        let mustClose = peer.goAwayLast != nil && open == 0
        if closes != (mustClose ? 1 : 0) || machine.isClosed != mustClose {
            fail("closed \(closes) times (machine closed: \(machine.isClosed)), the model says \(mustClose ? "once" : "not yet")")
        }
    }

    /// The final phase: the peer raises a zero stream limit, acknowledges, opens every window
    /// the uploads need and answers everything; the client hands over every upload. Ends when
    /// every request has its outcome (or, after GOAWAY, was never sent), or after three rounds
    /// without progress (a stall).
    private mutating func finish() {
        var idle = 0
        for round in 0..<2_000 where failures.isEmpty && idle < 3 {
            step = 100_000 + round
            let before = progress
            if !queue.isEmpty, peer.goAwayLast == nil, peer.ackedMaxStreams <= peer.openCount {
                deliver(peer.settings([HTTP2Setting(.maxConcurrentStreams, 100)]))
                openQueued()
            }
            peer.noticeCancels()
            for id in requestOfStream.keys.sorted() { handUpload(id, all: true) }
            var connectionNeed = 0
            for (id, stream) in peer.streams.sorted(by: { $0.key < $1.key }) where !stream.requestEnded {
                let need = (plan[stream.request].upload?.count ?? 0) - stream.upload.count
                connectionNeed += need
                if need > stream.receiveWindow {
                    deliver(peer.windowUpdate(id, need - stream.receiveWindow))
                }
            }
            if connectionNeed > peer.receiveConnectionWindow {
                deliver(peer.windowUpdate(0, connectionNeed - peer.receiveConnectionWindow))
            }
            for id in peer.streams.keys.sorted() {
                for _ in 0..<200 { if peer.streams[id] == nil { break }; respond(id) }
            }
            openQueued()
            check()
            idle = progress == before ? idle + 1 : 0
            if requestOfStream.keys.allSatisfy({ expected[$0] != nil }) && (queue.isEmpty || peer.goAwayLast != nil) { return }
        }
        if failures.isEmpty {
            let stuck = peer.streams.map { "\($0.key): request ended \($0.value.requestEnded), body sent \($0.value.bodySent), send window \($0.value.sendWindow)" }
            fail("stalled with \(queue.count) queued, streams \(stuck), connection send window \(peer.sendConnectionWindow)")
        }
    }

    /// A measure that grows with every octet or outcome (to tell a stall).
    private var progress: Int {
        observed.values.reduce(0) { $0 + $1.body.count + ($1.end == nil ? 0 : 1) }
            + peer.streams.values.reduce(0) { $0 + $1.upload.count + $1.bodySent } + requestOfStream.count
    }
}
