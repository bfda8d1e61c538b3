import Glibc

/// Tells whether a delegate call ran the protocol's default implementation.
///
/// Each default marks the calling thread with its method (``ran(_:)``); ``call(_:_:)`` clears the
/// mark, makes the call and reads it. Only the default of the method called counts: a delegate's
/// own method that calls another default of the protocol is still its own.
enum DefaultDelegateImplementation {
    private static let mark: pthread_key_t = {
        var key = pthread_key_t()
        precondition(pthread_key_create(&key, nil) == 0, "no thread-specific key is left for Courier")
        return key
    }()

    /// Marks the current thread: the default of `method` is running.
    static func ran(_ method: DelegateMethods) {
        let marked = UInt(bitPattern: pthread_getspecific(mark)) | UInt(method.rawValue)
        pthread_setspecific(mark, UnsafeRawPointer(bitPattern: marked))
    }

    /// Calls `method` through `body`, and says whether that ran the method's default.
    static func call<Value>(_ method: DelegateMethods, _ body: () -> Value) -> (value: Value, ranDefault: Bool) {
        let outer = pthread_getspecific(mark)
        pthread_setspecific(mark, nil)
        let value = body()
        let marked = UInt(bitPattern: pthread_getspecific(mark))
        pthread_setspecific(mark, outer)
        return (value, marked & UInt(method.rawValue) != 0)
    }
}
