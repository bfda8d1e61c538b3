#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

extension EventLoop {
    /// One registered descriptor: its interest and handler. Loop-confined.
    final class Registration {
        let fd: Int32
        let generation: UInt32
        var interest: Interest
        let handler: (Readiness) -> Void

        init(fd: Int32, generation: UInt32, interest: Interest, handler: @escaping (Readiness) -> Void) {
            self.fd = fd
            self.generation = generation
            self.interest = interest
            self.handler = handler
        }

        var token: UInt64 { UInt64(generation) << 32 | UInt64(UInt32(bitPattern: fd)) }
    }

    /// Starts watching `fd` and calls `handler` on the loop's thread whenever it is ready.
    ///
    /// Loop thread only. The handler is not `@Sendable`: it lives and runs on this
    /// loop's thread only, so it may capture loop-confined state. Readiness is
    /// level-triggered; errors and hang-ups are always reported.
    ///
    /// - Parameters:
    ///   - fd: A non-blocking descriptor, not registered on this loop yet.
    ///   - interest: What to watch for.
    ///   - handler: Called with what the descriptor is ready for.
    /// - Throws: ``SocketError`` from `epoll_ctl` (for example `EEXIST` when `fd` is
    ///   already registered, `EPERM` for a regular file).
    public func register(
        fd: Int32,
        interest: Interest,
        handler: @escaping (Readiness) -> Void
    ) throws(SocketError) {
        preconditionInEventLoop()
        guard fd >= 0 else { throw SocketError(operation: "epoll_ctl(ADD)", errno: EBADF) }
        if Int(fd) < state.registrations.count, state.registrations[Int(fd)] != nil {
            throw SocketError(operation: "epoll_ctl(ADD)", errno: EEXIST)
        }
        state.nextGeneration &+= 1
        let registration = Registration(fd: fd, generation: state.nextGeneration, interest: interest, handler: handler)
        let status = LinuxAPI.control(
            epoll: epollFD, operation: LinuxAPI.epollCtlAdd, fd: fd, events: interest.epollEvents, token: registration.token
        )
        if status != 0 {
            throw SocketError.current("epoll_ctl(ADD)")
        }
        if Int(fd) >= state.registrations.count {
            let newCount = max(Int(fd) + 1, state.registrations.count * 2, 64)
            state.registrations.append(contentsOf: repeatElement(nil, count: newCount - state.registrations.count))
        }
        state.registrations[Int(fd)] = registration
        state.registrationCount += 1
    }

    /// Changes what a registered descriptor is watched for.
    ///
    /// Loop thread only. Does nothing (and makes no system call) when the interest is unchanged.
    ///
    /// - Parameters:
    ///   - fd: A descriptor registered on this loop.
    ///   - interest: The new interest.
    /// - Throws: ``SocketError`` with `ENOENT` when `fd` is not registered, or from `epoll_ctl`.
    public func modify(fd: Int32, interest: Interest) throws(SocketError) {
        preconditionInEventLoop()
        guard let registration = registration(for: fd) else {
            throw SocketError(operation: "epoll_ctl(MOD)", errno: ENOENT)
        }
        if registration.interest == interest { return }
        let status = LinuxAPI.control(
            epoll: epollFD, operation: LinuxAPI.epollCtlMod, fd: fd, events: interest.epollEvents, token: registration.token
        )
        if status != 0 {
            throw SocketError.current("epoll_ctl(MOD)")
        }
        registration.interest = interest
    }

    /// Stops watching `fd` and releases its handler. Call it before closing the descriptor.
    ///
    /// Loop thread only. Events for `fd` already collected in the current turn are
    /// not delivered after this call. Deregistering an unknown descriptor does nothing.
    ///
    /// - Parameter fd: A descriptor registered on this loop.
    public func deregister(fd: Int32) {
        preconditionInEventLoop()
        guard registration(for: fd) != nil else { return }
        _ = LinuxAPI.control(epoll: epollFD, operation: LinuxAPI.epollCtlDel, fd: fd, events: 0, token: 0)
        state.registrations[Int(fd)] = nil
        state.registrationCount -= 1
    }

    /// The interest `fd` is registered with, or `nil` when it is not registered. Loop thread only.
    ///
    /// - Parameter fd: A descriptor.
    /// - Returns: The current interest.
    public func interest(for fd: Int32) -> Interest? {
        preconditionInEventLoop()
        return registration(for: fd)?.interest
    }

    /// How many descriptors are registered. Loop thread only.
    public var registeredCount: Int {
        preconditionInEventLoop()
        return state.registrationCount
    }

    private func registration(for fd: Int32) -> Registration? {
        guard fd >= 0, Int(fd) < state.registrations.count else { return nil }
        return state.registrations[Int(fd)]
    }

    /// Delivers one epoll event to its handler, unless the registration changed meanwhile.
    func dispatch(token: UInt64, events: UInt32) {
        let fd = Int32(bitPattern: UInt32(truncatingIfNeeded: token))
        let generation = UInt32(truncatingIfNeeded: token >> 32)
        guard let registration = registration(for: fd), registration.generation == generation else { return }
        registration.handler(Readiness(epollEvents: events))
    }
}
