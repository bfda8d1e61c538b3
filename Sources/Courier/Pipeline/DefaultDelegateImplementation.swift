#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// Tells whether a delegate call ran the protocol's default implementation.
///
/// ``call(_:on:_:)`` puts a probe on the calling thread: the method asked about and the delegate
/// asked. Each default reports to it (``ran(_:by:)``), and counts only if it is the default of
/// that method, run by that delegate. So a delegate's own method still counts as its own when it
/// calls another default of the protocol, or forwards to another delegate (a wrapper, a
/// multicast) whose method is the default.
enum DefaultDelegateImplementation {
    /// What one call asks about, and what it found.
    private struct Probe {
        let method: DelegateMethods
        let receiver: ObjectIdentifier
        var ranDefault = false
    }

    private static let probeKey: pthread_key_t = {
        var key = pthread_key_t()
        precondition(pthread_key_create(&key, nil) == 0, "no thread-specific key is left for Courier")
        return key
    }()

    /// Reports that the default of `method` is running on `delegate`.
    static func ran(_ method: DelegateMethods, by delegate: AnyObject) {
        guard let raw = pthread_getspecific(probeKey) else { return }
        let probe = UnsafeMutableRawPointer(mutating: raw).assumingMemoryBound(to: Probe.self)
        if probe.pointee.method == method, probe.pointee.receiver == ObjectIdentifier(delegate) {
            probe.pointee.ranDefault = true
        }
    }

    /// Calls `method` of `delegate` through `body`, and says whether that ran the method's default
    /// on `delegate` itself.
    static func call<Value>(_ method: DelegateMethods, on delegate: AnyObject, _ body: () -> Value) -> (value: Value, ranDefault: Bool) {
        var probe = Probe(method: method, receiver: ObjectIdentifier(delegate))
        let outer = pthread_getspecific(probeKey)
        let value = withUnsafeMutablePointer(to: &probe) { pointer in
            pthread_setspecific(probeKey, pointer)
            defer { pthread_setspecific(probeKey, outer) }
            return body()
        }
        return (value, probe.ranDefault)
    }
}
