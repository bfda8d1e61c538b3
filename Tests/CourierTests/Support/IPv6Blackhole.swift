import CourierWire
import Foundation

/// ``BlackholeListener`` on `[::1]`: a listener that never accepts, its backlog filled, so that
/// new IPv6 connects hang (the stand-in for an IPv6 path that times out).
final class IPv6Blackhole {
    let port: Int
    private var sockets: [Socket] = []

    init() throws {
        let listener = try Socket.listen(on: SocketAddress(ip: "::1", port: 0)!, backlog: 0)
        sockets.append(listener)
        port = try listener.localAddress().port
        // Fill the accept queue with connections nobody accepts.
        for _ in 0..<4 {
            if let filler = try? Socket.connect(to: SocketAddress(ip: "::1", port: port)!) { sockets.append(filler.socket) }
        }
    }

    func close() {
        for socket in sockets { socket.close() }
        sockets.removeAll()
    }

    deinit { close() }
}
