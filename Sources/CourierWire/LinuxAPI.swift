import CLinuxSystem

/// The epoll and eventfd constants and calls of the event loop, through the `CLinuxSystem` shim.
///
/// Swift's `Glibc` module does not import `sys/epoll.h` or `sys/eventfd.h`; the shim does, so
/// the calls are linked as ordinary C functions and `struct epoll_event` keeps the layout the C
/// compiler gives it (packed to 12 bytes on x86_64, 16 bytes on arm64).
enum LinuxAPI {
    static let epollIn = UInt32(EPOLLIN.rawValue)
    static let epollPri = UInt32(EPOLLPRI.rawValue)
    static let epollOut = UInt32(EPOLLOUT.rawValue)
    static let epollErr = UInt32(EPOLLERR.rawValue)
    static let epollHup = UInt32(EPOLLHUP.rawValue)
    static let epollEdgeTriggered = UInt32(EPOLLET.rawValue)
    static let epollCtlAdd = EPOLL_CTL_ADD
    static let epollCtlDel = EPOLL_CTL_DEL
    static let epollCtlMod = EPOLL_CTL_MOD

    /// `epoll_create1(EPOLL_CLOEXEC)`: a new epoll instance, or -1 with `errno` set.
    static func createEpoll() -> Int32 {
        epoll_create1(Int32(EPOLL_CLOEXEC))
    }

    /// `eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC)`: a wake-up counter, or -1 with `errno` set.
    static func createEventFD() -> Int32 {
        eventfd(0, Int32(EFD_NONBLOCK | EFD_CLOEXEC))
    }

    /// `epoll_ctl` with one event built on the stack.
    ///
    /// - Parameters:
    ///   - epoll: The epoll instance.
    ///   - operation: ``epollCtlAdd``, ``epollCtlMod`` or ``epollCtlDel``.
    ///   - fd: The descriptor.
    ///   - events: The `EPOLL*` bits to watch.
    ///   - token: What `epoll_wait` reports back in `data.u64`.
    /// - Returns: 0, or -1 with `errno` set.
    static func control(epoll: Int32, operation: Int32, fd: Int32, events: UInt32, token: UInt64) -> Int32 {
        var event = epoll_event()
        event.events = events
        event.data.u64 = token
        return epoll_ctl(epoll, operation, fd, &event)
    }
}
