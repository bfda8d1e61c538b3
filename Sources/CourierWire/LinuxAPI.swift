#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// Linux calls that Swift's `Glibc` module does not import (`sys/epoll.h`,
/// `sys/eventfd.h` and the `_GNU_SOURCE` functions `accept4` and `pthread_setname_np`).
///
/// The package may not add a C target for them, so they are looked up once with
/// `dlsym` and called through typed C function pointers, which keeps the C calling
/// convention exact. The constants are the Linux ABI values, identical on x86_64
/// and arm64; `struct epoll_event` is packed (12 bytes) on x86_64 only, which
/// ``EpollEventBuffer`` accounts for.
enum LinuxAPI {
    typealias EpollCreate1 = @convention(c) (Int32) -> Int32
    typealias EpollCtl = @convention(c) (Int32, Int32, Int32, UnsafeMutableRawPointer?) -> Int32
    typealias EpollWait = @convention(c) (Int32, UnsafeMutableRawPointer?, Int32, Int32) -> Int32
    typealias EventFD = @convention(c) (UInt32, Int32) -> Int32
    typealias Accept4 = @convention(c) (Int32, UnsafeMutablePointer<sockaddr>?, UnsafeMutablePointer<socklen_t>?, Int32) -> Int32
    typealias SetThreadName = @convention(c) (pthread_t, UnsafePointer<CChar>?) -> Int32

    static let epollIn: UInt32 = 0x001
    static let epollPri: UInt32 = 0x002
    static let epollOut: UInt32 = 0x004
    static let epollErr: UInt32 = 0x008
    static let epollHup: UInt32 = 0x010
    static let epollCtlAdd: Int32 = 1
    static let epollCtlDel: Int32 = 2
    static let epollCtlMod: Int32 = 3
    /// `EPOLL_CLOEXEC` and `EFD_CLOEXEC` equal `O_CLOEXEC`.
    static let closeOnExec = Int32(O_CLOEXEC)
    /// `EFD_NONBLOCK` equals `O_NONBLOCK`.
    static let nonBlocking = Int32(O_NONBLOCK)

    /// The resolved entry points, or `nil` when the C library lacks one.
    struct Functions: @unchecked Sendable {
        // @unchecked: immutable C function pointers, safe to share.
        let epollCreate1: EpollCreate1
        let epollCtl: EpollCtl
        let epollWait: EpollWait
        let eventFD: EventFD
        let accept4: Accept4
        let setThreadName: SetThreadName?
    }

    /// Looked up once, on first use.
    static let functions: Functions? = {
        guard let library = dlopen(nil, RTLD_NOW) else { return nil }
        func symbol<F>(_ name: String, as type: F.Type) -> F? {
            guard let pointer = dlsym(library, name) else { return nil }
            return unsafeBitCast(pointer, to: type)
        }
        guard let create = symbol("epoll_create1", as: EpollCreate1.self),
              let ctl = symbol("epoll_ctl", as: EpollCtl.self),
              let wait = symbol("epoll_wait", as: EpollWait.self),
              let eventFD = symbol("eventfd", as: EventFD.self),
              let accept4 = symbol("accept4", as: Accept4.self)
        else { return nil }
        return Functions(
            epollCreate1: create, epollCtl: ctl, epollWait: wait, eventFD: eventFD, accept4: accept4,
            setThreadName: symbol("pthread_setname_np", as: SetThreadName.self)
        )
    }()

    /// The functions, or a ``SocketError`` naming the missing call.
    static func require(_ operation: String) throws(SocketError) -> Functions {
        guard let functions else {
            throw SocketError(operation: operation, message: "the C library does not provide epoll/eventfd/accept4")
        }
        return functions
    }
}

/// Raw storage for `struct epoll_event` values, whose layout differs by architecture.
struct EpollEventBuffer {
    #if arch(x86_64)
    static let stride = 12
    static let dataOffset = 4
    #else
    static let stride = 16
    static let dataOffset = 8
    #endif

    let capacity: Int
    let raw: UnsafeMutableRawPointer

    init(capacity: Int) {
        self.capacity = capacity
        self.raw = UnsafeMutableRawPointer.allocate(byteCount: capacity * Self.stride, alignment: 8)
        raw.initializeMemory(as: UInt8.self, repeating: 0, count: capacity * Self.stride)
    }

    func deallocate() { raw.deallocate() }

    func events(at index: Int) -> UInt32 {
        raw.loadUnaligned(fromByteOffset: index * Self.stride, as: UInt32.self)
    }

    func data(at index: Int) -> UInt64 {
        raw.loadUnaligned(fromByteOffset: index * Self.stride + Self.dataOffset, as: UInt64.self)
    }

    func set(events: UInt32, data: UInt64, at index: Int) {
        raw.storeBytes(of: events, toByteOffset: index * Self.stride, as: UInt32.self)
        raw.storeBytes(of: data, toByteOffset: index * Self.stride + Self.dataOffset, as: UInt64.self)
    }

    /// Calls `epoll_ctl` with a single event built on the stack.
    static func control(
        _ functions: LinuxAPI.Functions, epoll: Int32, operation: Int32, fd: Int32, events: UInt32, data: UInt64
    ) -> Int32 {
        withUnsafeTemporaryAllocation(byteCount: 16, alignment: 8) { buffer in
            guard let base = buffer.baseAddress else { return -1 }
            base.initializeMemory(as: UInt8.self, repeating: 0, count: 16)
            base.storeBytes(of: events, toByteOffset: 0, as: UInt32.self)
            base.storeBytes(of: data, toByteOffset: dataOffset, as: UInt64.self)
            return functions.epollCtl(epoll, operation, fd, base)
        }
    }
}
