@testable import Courier
import CourierTestServer
import CourierTestSupport

/// What only Courier's tests can check of a ``LeakCheck`` (the shared check, in
/// CourierTestSupport): the pools and connection objects a native transport still holds, read
/// from its census through `@testable` internals, and the transports and connections a test makes.
extension LeakCheck {
    /// Registers a server whose port must have no client sockets of this process at the end.
    func watch(_ server: TestServer) {
        watch(port: server.port)
    }

    /// A fresh transport of the given kind, tracked (and its pools counted, for the native one).
    func transport(_ kind: TransportUnderTest) -> any Transport {
        let transport = kind.make()
        if let native = transport as? NativeTransport {
            track(native)
        } else {
            trackObject(transport as AnyObject)
        }
        return transport
    }

    /// A fresh native transport with the given configuration, tracked, its pools and connection
    /// objects counted by its census.
    /// - Parameter configuration: the transport's configuration. Default: the default configuration.
    /// - Returns: the transport; shut it down or release it before the body ends.
    func native(_ configuration: NativeTransport.Configuration = .init()) -> NativeTransport {
        track(NativeTransport(configuration: configuration))
    }

    /// Registers a native transport you made yourself: it must be freed, and its census must
    /// reach zero (no pool or connection object alive).
    /// - Returns: `transport`, so that the call can wrap an initializer.
    @discardableResult
    func track(_ transport: NativeTransport) -> NativeTransport {
        let census = transport.census
        watch("native pools and connections") { census.livePools + census.liveConnections }
        trackObject(transport)
        return transport
    }

    /// A tracked connection to `server` over a fresh tracked transport; the server's port is watched.
    func connection(_ server: some CaseServer, _ kind: TransportUnderTest, timeout: Duration? = .seconds(10),
                    configure: (inout HTTPConnection.Configuration) -> Void = { _ in }) -> HTTPConnection {
        watch(port: server.port)
        var configuration = HTTPConnection.Configuration(timeout: timeout, transport: transport(kind))
        configure(&configuration)
        return track(HTTPConnection(baseURL: server.baseURL, configuration: configuration))
    }
}
