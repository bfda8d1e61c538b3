/// A failure to start or reach an independent test peer (nginx, openssl, squid, dante), or to
/// set up what it needs (a port, certificates).
package struct PeerError: Error, CustomStringConvertible {
    package let description: String
    package init(_ description: String) { self.description = description }
}
