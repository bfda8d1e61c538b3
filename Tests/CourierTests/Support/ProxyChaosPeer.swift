import CourierTestSupport
import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// A scripted in-process proxy for the proxy chaos test: it listens on 127.0.0.1 (port 0) and
/// speaks HTTP (`CONNECT` tunnels and absolute-form forwarding, over TLS when given a
/// ``ServerTLSContext``) or SOCKS5 (with RFC 1929 username and password when given
/// credentials). Every destination is reached at 127.0.0.1 on the port asked for.
///
/// The next connection it accepts meets the fault the test planned (``plan(_:)``); every later
/// one behaves. It logs what the client told it (request heads, SOCKS5 credentials and
/// destinations), counts its stalls, and can close every open connection at once
/// (``closeConnections()``), as a proxy dropping idle connections does, or close the tunnel that
/// next carries a request without passing it on (``breakTunnelOnNextRequest(_:)``). One thread per connection;
/// every wait is bounded (``PeerStream``).
final class ProxyChaosPeer: Sendable {
    /// The protocol the peer speaks.
    enum Speaks: Sendable {
        /// HTTP: `CONNECT` and forwarding.
        case http
        /// SOCKS5.
        case socks5
    }

    /// What the peer has seen and done so far.
    struct Log: Sendable {
        /// Connections accepted (but not those the client had closed before: ``closedOnArrival``).
        var accepted = 0
        /// Connections the client had closed by the time they were accepted (a cancelled
        /// request's, left in the listen queue): they meet no fault and are closed at once.
        var closedOnArrival = 0
        /// HTTP request heads as the client sent them (`CONNECT` and forwarded requests).
        var heads: [String] = []
        /// RFC 1929 usernames and passwords received.
        var socksCredentials: [String] = []
        /// SOCKS5 destinations asked for: `name:port` or `address:port`.
        var socksDestinations: [String] = []
        /// Times it stopped answering on purpose (``ProxyChaosFault/stalls``, ``TunnelBreak/stall``).
        var stalls = 0
        /// Bytes it read from clients while stalled, and passed on to no one.
        var stalledBytes = 0
        /// Bytes it read from clients in tunnels and forwarding connections, to relay (the
        /// handshakes with the proxy not counted).
        var relayedBytes = 0
        /// Connections being served now.
        var open = 0
    }

    /// The port it accepts on.
    let port: Int
    private let listener: Int32
    private let sockets = AcceptedSockets()
    private let state = Locked(Log())
    private let nextFault = Locked<ProxyChaosFault?>(nil)
    private let breaking = Locked<TunnelBreak?>(nil)

    /// Starts listening.
    /// - Parameters:
    ///   - speaks: HTTP or SOCKS5.
    ///   - tls: for an `https://` proxy, the certificate it serves; `nil` for plain TCP.
    ///   - credentials: the SOCKS5 username and password it asks for; `nil`: none.
    init(speaks: Speaks, tls: ServerTLSContext? = nil, credentials: (user: String, password: String)? = nil) throws {
        let (listener, port) = try LoopbackPort.listening(backlog: 64)
        self.listener = listener
        self.port = port
        let connection = Connection(speaks: speaks, tls: tls, socksUser: credentials.map { "\($0.user):\($0.password)" },
                                    state: state, breaking: breaking)
        Thread { [sockets, nextFault, state] in
            while true {
                let client = accept(listener, nil, nil)
                guard client >= 0 else { return }
                if Self.closedByClient(client) {
                    state.withLock { $0.closedOnArrival += 1 }
                    Glibc.close(client)
                    continue
                }
                sockets.add(client)
                state.withLock {
                    $0.accepted += 1
                    $0.open += 1
                }
                let fault = nextFault.withLock { planned in
                    defer { planned = nil }
                    return planned ?? .behave
                }
                Thread {
                    let stream = PeerStream(fd: client)
                    defer {
                        stream.release()
                        sockets.close(client)
                        state.withLock { $0.open -= 1 }
                    }
                    connection.serve(stream, fault: fault)
                }.start()
            }
        }.start()
    }

    deinit {
        stop()
        Glibc.close(listener)
    }

    /// Whether the client has already closed `fd` (its end of stream or a reset is queued, with or
    /// without bytes before it): a connection given up in the listen queue, which must not take
    /// the planned fault from the connection the test's next request opens.
    private static func closedByClient(_ fd: Int32) -> Bool {
        var poller = pollfd(fd: fd, events: Int16(POLLIN) | 0x2000, revents: 0)  // 0x2000: POLLRDHUP
        guard poll(&poller, 1, 0) > 0 else { return false }
        return poller.revents & (0x2000 | Int16(POLLHUP) | Int16(POLLERR)) != 0
    }

    /// The fault the next accepted connection meets (later ones behave); a tunnel break planned
    /// before (``breakTunnelOnNextRequest(_:)``) that no request met is called off.
    func plan(_ fault: ProxyChaosFault) {
        breaking.withLock { $0 = nil }
        nextFault.withLock { $0 = fault }
    }

    /// What it has seen and done so far.
    var log: Log { state.withLock { $0 } }

    /// How a kept tunnel breaks when the client next sends on it (``breakTunnelOnNextRequest(_:)``).
    enum TunnelBreak: Sendable {
        /// It closes both sides at once.
        case drop
        /// It stops relaying both ways and swallows what the client sends (counted in
        /// ``Log/stalledBytes``) until ``closeConnections()``, so that a test can let the client
        /// put several requests on it first.
        case stall
    }

    /// Makes the open connection that next receives bytes from the client (a kept tunnel, or a
    /// forwarding connection) break as `how` says, without passing them on, as a proxy that
    /// dropped an idle tunnel just as the client reused it: the client has sent its request, and
    /// nothing of it reached the origin.
    func breakTunnelOnNextRequest(_ how: TunnelBreak = .drop) {
        breaking.withLock { $0 = how }
    }

    /// Closes every connection now open (both sides of a tunnel), as a proxy dropping its
    /// idle connections does; returns at once, ``Log/open`` reaches 0 when their threads have ended.
    func closeConnections() {
        sockets.shutDownAll()
    }

    /// Stops accepting and shuts down every connection.
    func stop() {
        Glibc.shutdown(listener, Int32(SHUT_RDWR))
        sockets.shutDownAll()
    }
}

extension ProxyChaosPeer {
    /// How the peer serves one accepted connection (shared by all connection threads).
    struct Connection: Sendable {
        /// The protocol the peer speaks.
        let speaks: Speaks
        /// The certificate of an `https://` proxy; `nil` for plain TCP.
        let tls: ServerTLSContext?
        /// `user:password` it accepts over RFC 1929, or `nil` to ask for none.
        let socksUser: String?
        /// The peer's log, which every connection adds to.
        let state: Locked<Log>
        /// How the next bytes a relay reads from the client break it (``breakTunnelOnNextRequest(_:)``).
        let breaking: Locked<TunnelBreak?>

        /// How many bytes of the origin's answer a cut or stalled relay passes on first.
        static let cutAfter = 12_000

        /// Serves `stream`, meeting `fault`.
        func serve(_ stream: PeerStream, fault: ProxyChaosFault) {
            if fault == .closeAtOnce { return }
            if let tls {
                guard (try? stream.acceptTLS(tls)) != nil else { return }
            }
            switch speaks {
            case .http: serveHTTP(stream, fault: fault)
            case .socks5: serveSOCKS5(stream, fault: fault)
            }
        }

        /// Waits (10 s at most) until the client closes the connection, counted as a stall, with
        /// the bytes it reads meanwhile (`read` of them already).
        private func stall(_ stream: PeerStream, read: Int = 0) {
            state.withLock {
                $0.stalls += 1
                $0.stalledBytes += read
            }
            awaitClose(stream) { count in state.withLock { $0.stalledBytes += count } }
        }

        /// Reads until the client closes the connection (10 s at most), telling `heard` how many
        /// bytes each read brought.
        private func awaitClose(_ stream: PeerStream, heard: (Int) -> Void = { _ in }) {
            let deadline = ContinuousClock.now + .seconds(10)
            while ContinuousClock.now < deadline, let bytes = stream.read(), !bytes.isEmpty {
                heard(bytes.count)
            }
        }

        // MARK: HTTP

        /// `CONNECT` or one forwarded request, then the relay.
        private func serveHTTP(_ stream: PeerStream, fault: ProxyChaosFault) {
            var pending: [UInt8] = []
            guard let head = stream.readHead(&pending) else { return }
            state.withLock { $0.heads.append(head) }
            let line = (head.components(separatedBy: "\r\n").first ?? "").split(separator: " ")
            guard line.count == 3 else { return }
            let isConnect = line[0] == "CONNECT"
            switch fault {
            case .closeBeforeAnswer:
                return
            case .stall:
                return stall(stream)
            case .status(let status):
                let challenge = status == 407 ? "Proxy-Authenticate: Basic realm=\"chaos\"\r\n" : ""
                stream.write("HTTP/1.1 \(status) Proxy Fault\r\n\(challenge)Content-Length: 5\r\nConnection: close\r\n\r\nfault")
                return awaitClose(stream)
            case .garbageHead:
                stream.write("HTTP/1.1 2OO OK\r\n\r\n")
                return awaitClose(stream)
            case .overlongHead:
                stream.write("HTTP/1.1 200 OK\r\nX-Long: " + String(repeating: "a", count: 100_000) + "\r\n\r\n")
                return awaitClose(stream)
            case .closeMidReply:
                stream.write("HTTP/1.1 200 Conn")
                return
            case .bytesAfterEstablished:
                stream.write("HTTP/1.1 200 Connection established\r\n\r\nunexpected")
                return awaitClose(stream)
            case .interimThenBehave:
                stream.write("HTTP/1.1 100 Continue\r\n\r\n")
            default:
                break
            }
            let target = String(line[1])
            let portText = isConnect ? target.split(separator: ":").last
                                     : URLComponents(string: target)?.port.map { Substring(String($0)) }
            guard let portText, let port = Int(portText), let upstream = Self.connectLoopback(port: port) else {
                stream.write("HTTP/1.1 502 Bad Gateway\r\nContent-Length: 0\r\nConnection: close\r\n\r\n")
                return
            }
            if isConnect {
                guard stream.write("HTTP/1.1 200 Connection established\r\n\r\n") else {
                    Glibc.close(upstream)
                    return
                }
                relay(stream, upstream: upstream, fault: fault, forwarding: false, pending: pending)
            } else {
                guard PeerStream.send(Self.forwarded(head), to: upstream) else {
                    Glibc.close(upstream)
                    return
                }
                relay(stream, upstream: upstream, fault: fault, forwarding: true, pending: pending, bodyLeft: Self.contentLength(head))
            }
        }

        /// A request head as the peer forwards it: without `Proxy-Authorization`, ended by its blank line.
        private static func forwarded(_ head: String) -> [UInt8] {
            let lines = head.components(separatedBy: "\r\n").filter { !$0.lowercased().hasPrefix("proxy-authorization:") }
            return Array((lines.joined(separator: "\r\n") + "\r\n\r\n").utf8)
        }

        /// The `Content-Length` of a request head: the length of the body that follows it (0 without one).
        private static func contentLength(_ head: String) -> Int {
            head.components(separatedBy: "\r\n").lazy.compactMap { line -> Int? in
                let parts = line.split(separator: ":", maxSplits: 1)
                guard parts.count == 2, parts[0].lowercased() == "content-length" else { return nil }
                return Int(parts[1].trimmingCharacters(in: .whitespaces))
            }.first ?? 0
        }

        // MARK: SOCKS5

        /// The greeting, the username and password when asked for, the `CONNECT` request and
        /// the reply, then the relay.
        private func serveSOCKS5(_ stream: PeerStream, fault: ProxyChaosFault) {
            var pending: [UInt8] = []
            guard stream.fill(&pending, toCount: 2), stream.fill(&pending, toCount: 2 + Int(pending[1])) else { return }
            pending.removeFirst(2 + Int(pending[1]))
            switch fault {
            case .closeBeforeAnswer:
                return
            case .socksMethodVersion:
                stream.write([4, 0])
                return awaitClose(stream)
            case .socksMethod(let method) where method != 0:
                stream.write([5, method])
                return awaitClose(stream)
            default:
                break
            }
            if let socksUser, fault != .socksMethod(0) {
                stream.write([5, 2])
                guard stream.fill(&pending, toCount: 2) else { return }
                let userLength = Int(pending[1])
                guard stream.fill(&pending, toCount: 3 + userLength) else { return }
                let passwordLength = Int(pending[2 + userLength])
                guard stream.fill(&pending, toCount: 3 + userLength + passwordLength) else { return }
                let user = String(decoding: pending[2..<(2 + userLength)], as: UTF8.self)
                let password = String(decoding: pending[(3 + userLength)..<(3 + userLength + passwordLength)], as: UTF8.self)
                pending.removeFirst(3 + userLength + passwordLength)
                state.withLock { $0.socksCredentials.append("\(user):\(password)") }
                guard fault != .socksAuthRefused, "\(user):\(password)" == socksUser else {
                    stream.write([1, 1])
                    return awaitClose(stream)
                }
                stream.write([1, 0])
            } else {
                stream.write([5, 0])
            }
            guard stream.fill(&pending, toCount: 5) else { return }
            let addressLength = switch pending[3] {
            case 1: 4
            case 4: 16
            default: 1 + Int(pending[4])
            }
            guard stream.fill(&pending, toCount: 4 + addressLength + 2) else { return }
            let address = pending[4..<(4 + addressLength)]
            let host = switch pending[3] {
            case 1: address.map(String.init).joined(separator: ".")
            case 4: "ipv6"
            default: String(decoding: address.dropFirst(), as: UTF8.self)
            }
            let port = Int(pending[4 + addressLength]) << 8 | Int(pending[5 + addressLength])
            pending.removeFirst(4 + addressLength + 2)
            state.withLock { $0.socksDestinations.append("\(host):\(port)") }
            let portBytes = [UInt8(port >> 8), UInt8(port & 0xFF)]
            switch fault {
            case .stall:
                return stall(stream)
            case .socksReply(let code):
                stream.write([5, code, 0, 1, 0, 0, 0, 0, 0, 0])
                return awaitClose(stream)
            case .socksReplyVersion:
                stream.write([4, 0, 0, 1, 127, 0, 0, 1] + portBytes)
                return awaitClose(stream)
            case .socksTruncatedReply:
                stream.write([5, 0, 0, 1, 127, 0])
                return
            case .socksOverlongReply:
                stream.write([5, 0, 0, 3, 4] + Array("abcd".utf8) + portBytes + [1, 2, 3])
                return awaitClose(stream)
            case .socksUnknownAddressType:
                stream.write([5, 0, 0, 2])  // no length follows from type 2: the client must stop here
                return awaitClose(stream)
            case .closeMidReply:
                stream.write([5, 0, 0])
                return
            default:
                break
            }
            guard let upstream = Self.connectLoopback(port: port) else {
                stream.write([5, 5, 0, 1, 0, 0, 0, 0, 0, 0])
                return
            }
            let reply: [UInt8] = switch fault {
            case .socksDomainReply: [5, 0, 0, 3, 9] + Array("localhost".utf8) + portBytes
            case .socksIPv6Reply: [5, 0, 0, 4] + Array(repeating: 0, count: 15) + [1] + portBytes
            default: [5, 0, 0, 1, 127, 0, 0, 1] + portBytes
            }
            guard stream.write(reply) else {
                Glibc.close(upstream)
                return
            }
            relay(stream, upstream: upstream, fault: fault, forwarding: false, pending: pending)
        }

        // MARK: Relay

        /// Relays bytes both ways until either side closes (or ``closeConnections()``, or the
        /// client's next bytes after ``breakTunnelOnNextRequest(_:)``), 30 s at most. Forwarding, each
        /// request head loses its `Proxy-Authorization` and is logged, and `bodyLeft` bytes of the
        /// first request's body (then of each next one's) pass on as they are.
        /// ``ProxyChaosFault/dropMidResponse`` closes both sides after ``cutAfter`` bytes
        /// from the origin, ``ProxyChaosFault/stallMidResponse`` stops relaying there.
        private func relay(_ stream: PeerStream, upstream: Int32, fault: ProxyChaosFault, forwarding: Bool, pending: [UInt8],
                           bodyLeft: Int = 0) {
            defer {
                Glibc.shutdown(upstream, Int32(SHUT_RDWR))
                Glibc.close(upstream)
            }
            var fromClient = pending
            var bodyLeft = bodyLeft
            var fromOrigin = 0
            var buffer = [UInt8](repeating: 0, count: 65_536)
            let deadline = ContinuousClock.now + .seconds(30)
            while ContinuousClock.now < deadline {
                if !fromClient.isEmpty {
                    guard pass(&fromClient, bodyLeft: &bodyLeft, forwarding: forwarding, to: upstream) else { return }
                }
                var pollers = [pollfd(fd: stream.fd, events: Int16(POLLIN), revents: 0),
                               pollfd(fd: upstream, events: Int16(POLLIN), revents: 0)]
                if !stream.hasBuffered, poll(&pollers, 2, 1_000) <= 0 { continue }
                if stream.hasBuffered || pollers[0].revents != 0 {
                    guard let bytes = stream.read(waitingAtMost: 0) else { return }
                    let broken = bytes.isEmpty ? nil : breaking.withLock { breaking in
                        defer { breaking = nil }
                        return breaking
                    }
                    switch broken {
                    case .drop: return
                    case .stall: return stall(stream, read: bytes.count)
                    case nil: break
                    }
                    state.withLock { $0.relayedBytes += bytes.count }
                    fromClient += bytes
                }
                guard pollers[1].revents != 0 else { continue }
                let count = buffer.withUnsafeMutableBytes { Glibc.read(upstream, $0.baseAddress, $0.count) }
                guard count > 0 else { return }
                let cutting = fault == .dropMidResponse || fault == .stallMidResponse
                let taken = cutting ? min(count, Self.cutAfter - fromOrigin) : count
                guard stream.write(Array(buffer[..<taken])) else { return }
                fromOrigin += taken
                if cutting, fromOrigin >= Self.cutAfter {
                    if fault == .stallMidResponse { stall(stream) }
                    return
                }
            }
        }

        /// Sends what the client sent on to the origin: as it is in a tunnel; forwarding, the
        /// `bodyLeft` bytes of the current request's body as they are, then each complete request
        /// head (logged, without `Proxy-Authorization`) and its `Content-Length` body, keeping an
        /// incomplete head.
        /// - Returns: `false` when the origin's socket is gone.
        private func pass(_ bytes: inout [UInt8], bodyLeft: inout Int, forwarding: Bool, to upstream: Int32) -> Bool {
            guard forwarding else {
                defer { bytes = [] }
                return PeerStream.send(bytes, to: upstream)
            }
            while !bytes.isEmpty {
                if bodyLeft > 0 {
                    let count = min(bodyLeft, bytes.count)
                    guard PeerStream.send(Array(bytes[..<count]), to: upstream) else { return false }
                    bytes.removeFirst(count)
                    bodyLeft -= count
                    continue
                }
                guard let end = bytes.firstRange(of: [13, 10, 13, 10]) else { break }
                let head = String(decoding: bytes[..<end.lowerBound], as: UTF8.self)
                bytes.removeSubrange(..<end.upperBound)
                state.withLock { $0.heads.append(head) }
                bodyLeft = Self.contentLength(head)
                guard PeerStream.send(Self.forwarded(head), to: upstream) else { return false }
            }
            return true
        }

        /// A blocking socket connected to 127.0.0.1:`port`, or `nil`.
        static func connectLoopback(port: Int) -> Int32? {
            let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
            guard fd >= 0 else { return nil }
            var address = sockaddr_in()
            address.sin_family = sa_family_t(AF_INET)
            address.sin_port = in_port_t(UInt16(port).bigEndian)
            address.sin_addr.s_addr = inet_addr("127.0.0.1")
            let connected = withUnsafePointer(to: &address) {
                $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { Glibc.connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
            }
            guard connected == 0 else {
                Glibc.close(fd)
                return nil
            }
            var timeout = timeval(tv_sec: 10, tv_usec: 0)
            setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
            return fd
        }
    }
}
