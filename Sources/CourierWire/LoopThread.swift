#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif
import CLinuxSystem

/// Starts a named POSIX thread that must be joined (or detached) by its owner.
enum LoopThread {
    /// Carries the thread body through `pthread_create`'s untyped argument.
    private final class Body {
        let name: String
        let work: () -> Void
        init(name: String, work: @escaping () -> Void) {
            self.name = name
            self.work = work
        }
    }

    /// Starts a thread running `body`.
    ///
    /// - Parameters:
    ///   - name: The thread's name (truncated to 15 bytes, the kernel's limit).
    ///   - body: What the thread runs; the thread ends when it returns.
    /// - Returns: The `pthread_t`, as an integer, for `pthread_join`.
    /// - Throws: ``SocketError`` from `pthread_create`.
    static func start(name: String, _ body: @escaping @Sendable () -> Void) throws(SocketError) -> UInt {
        let box = Unmanaged.passRetained(Body(name: name, work: body))
        var handle = pthread_t()
        let status = pthread_create(&handle, nil, { argument in
            guard let argument else { return nil }
            let body = Unmanaged<Body>.fromOpaque(argument).takeRetainedValue()
            // The kernel's limit is 15 bytes: cut the bytes, not the characters, so that a cut
            // through a multi-byte character cannot grow the name past the limit.
            let shortName = body.name.utf8.prefix(15).map { CChar(bitPattern: $0) } + [0]
            _ = courier_set_thread_name(pthread_self(), shortName)
            body.work()
            return nil
        }, box.toOpaque())
        if status != 0 {
            box.release()
            throw SocketError(operation: "pthread_create", errno: status)
        }
        return UInt(handle)
    }
}
