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
/// (``closeConnections()``), as a proxy dropping idle connections does. One thread per connection;
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
        /// Connections accepted.
        var accepted = 0
        /// HTTP request heads as the client sent them (`CONNECT` and forwarded requests).
        var heads: [String] = []
        /// RFC 1929 usernames and passwords received.
        var socksCredentials: [String] = []
        /// SOCKS5 destinations asked for: `name:port` or `address:port`.
        var socksDestinations: [String] = []
        /// Times it stopped answering on purpose (``ProxyChaosFault/stalls``).
        var stalls = 0
        /// Connections being served now.
        var open = 0
    }

    /// The port it accepts on.
    let port: Int
    private let listener: Int32
    private let sockets = AcceptedSockets()
    private let state = Locked(Log())
    private let nextFault = Locked<ProxyChaosFault?>(nil)

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
                                    state: state)
        Thread { [sockets, nextFault, state] in
            while true {
                let client = accept(listener, nil, nil)
                guard client >= 0 else { return }
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

    /// The fault the next accepted connection meets (later ones behave).
    func plan(_ fault: ProxyChaosFault) {
        nextFault.withLock { $0 = fault }
    }

    /// What it has seen and done so far.
    var log: Log { state.withLock { $0 } }

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

        /// Waits (10 s at most) until the client closes the connection, counted as a stall.
        private func stall(_ stream: PeerStream) {
            state.withLock { $0.stalls += 1 }
            awaitClose(stream)
        }

        /// Reads until the client closes the connection (10 s at most).
        private func awaitClose(_ stream: PeerStream) {
            let deadline = ContinuousClock.now + .seconds(10)
            while ContinuousClock.now < deadline, let bytes = stream.read(), !bytes.isEmpty {}
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
                relay(stream, upstream: upstream, fault: fault, forwarding: true, pending: pending)
            }
        }

        /// A request head as the peer forwards it: without `Proxy-Authorization`, ended by its blank line.
        private static func forwarded(_ head: String) -> [UInt8] {
            let lines = head.components(separatedBy: "\r\n").filter { !$0.lowercased().hasPrefix("proxy-authorization:") }
            return Array((lines.joined(separator: "\r\n") + "\r\n\r\n").utf8)
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

        /// Relays bytes both ways until either side closes (or ``closeConnections()``), 30 s at
        /// most. Forwarding, each request head loses its `Proxy-Authorization` and is logged.
        /// ``ProxyChaosFault/dropMidResponse`` closes both sides after ``cutAfter`` bytes
        /// from the origin, ``ProxyChaosFault/stallMidResponse`` stops relaying there.
        private func relay(_ stream: PeerStream, upstream: Int32, fault: ProxyChaosFault, forwarding: Bool, pending: [UInt8]) {
            defer {
                Glibc.shutdown(upstream, Int32(SHUT_RDWR))
                Glibc.close(upstream)
            }
            var fromClient = pending
            var fromOrigin = 0
            var buffer = [UInt8](repeating: 0, count: 65_536)
            let deadline = ContinuousClock.now + .seconds(30)
            while ContinuousClock.now < deadline {
                if !fromClient.isEmpty {
                    guard pass(&fromClient, forwarding: forwarding, to: upstream) else { return }
                }
                var pollers = [pollfd(fd: stream.fd, events: Int16(POLLIN), revents: 0),
                               pollfd(fd: upstream, events: Int16(POLLIN), revents: 0)]
                if !stream.hasBuffered, poll(&pollers, 2, 1_000) <= 0 { continue }
                if stream.hasBuffered || pollers[0].revents != 0 {
                    guard let bytes = stream.read(waitingAtMost: 0) else { return }
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

        /// Sends what the client sent on to the origin: as it is in a tunnel; forwarding, each
        /// complete request head (logged, without `Proxy-Authorization`), keeping an incomplete one.
        /// - Returns: `false` when the origin's socket is gone.
        private func pass(_ bytes: inout [UInt8], forwarding: Bool, to upstream: Int32) -> Bool {
            guard forwarding else {
                defer { bytes = [] }
                return PeerStream.send(bytes, to: upstream)
            }
            while let end = bytes.firstRange(of: [13, 10, 13, 10]) {
                let head = String(decoding: bytes[..<end.lowerBound], as: UTF8.self)
                bytes.removeSubrange(..<end.upperBound)
                state.withLock { $0.heads.append(head) }
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
