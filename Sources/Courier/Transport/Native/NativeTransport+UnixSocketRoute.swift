import CourierWire

extension NativeTransport {
    /// Sends the requests for one host (and, optionally, one port) over a Unix domain socket
    /// instead of TCP, like curl's `--unix-socket`: for the Docker engine
    /// (`/var/run/docker.sock`), a local daemon, or a sidecar.
    ///
    /// URLs stay ordinary `http://` (or `https://`) URLs with a host of your choosing, so the `Host`
    /// field, cookies, credentials, redirects and the cache follow their usual per-origin rules;
    /// only where the connection goes changes. Such connections are pooled apart from TCP ones
    /// (the socket path is part of the pool key), never go through a proxy, and over `https` run
    /// TLS with the URL's host as the server name.
    ///
    /// ```swift
    /// var configuration = NativeTransport.Configuration()
    /// configuration.unixSockets = [try .init(host: "docker", path: "/var/run/docker.sock")]
    /// // http://docker/v1.43/containers/json now goes to /var/run/docker.sock
    /// ```
    ///
    /// Connecting fails with ``HTTPConnectionError/unixSocketNotFound``,
    /// ``HTTPConnectionError/unixSocketPermissionDenied`` or ``HTTPConnectionError/notAUnixSocket``,
    /// or ``HTTPConnectionError/cannotConnect`` when nothing listens on the socket.
    public struct UnixSocketRoute: Sendable, Hashable, CustomStringConvertible {
        /// The URL host this route applies to, lower-cased (IPv6 literals without brackets).
        public let host: String
        /// The URL port this route applies to (the scheme's default when the URL has none);
        /// `nil` for every port.
        public let port: Int?
        /// The socket's file system path.
        public let path: String

        /// A route after checking it.
        /// - Parameters:
        ///   - host: the host as written in URLs, e.g. `"docker"`; any case.
        ///   - port: the port in URLs, 1...65535; `nil` (the default) for every port.
        ///   - path: the socket's path, 1 to 107 bytes (what `sun_path` holds), without NUL.
        /// - Throws: ``HTTPConnectionError/invalidURL`` naming what cannot be used.
        public init(host: String, port: Int? = nil, path: String) throws(HTTPConnectionError) {
            let name = HostText.unbracketed(Substring(host.lowercased()))
            guard !name.isEmpty else { throw .invalidURL.with(detail: "a Unix socket route needs a host") }
            if let port, !(1...65535).contains(port) {
                throw .invalidURL.with(detail: "the Unix socket route for \(name) has port \(port), not 1...65535")
            }
            let length = path.utf8.count
            guard length > 0, length <= Socket.maxUnixPathLength, !path.utf8.contains(0) else {
                throw .invalidURL.with(detail: "the Unix socket path for \(name) is \(length) bytes; it must be 1 to \(Socket.maxUnixPathLength), without NUL")
            }
            self.host = String(name)
            self.port = port
            self.path = path
        }

        /// Whether requests to `host` (lower-cased, without brackets) and `port` take this route.
        func matches(host: String, port: Int) -> Bool {
            host == self.host && (self.port == nil || self.port == port)
        }

        /// `"docker → unix:/var/run/docker.sock"`, or `"docker:2375 → …"` with a port.
        public var description: String {
            return "\(HostText.bracketed(host))\(port.map { ":\($0)" } ?? "") → unix:\(path)"
        }
    }
}
