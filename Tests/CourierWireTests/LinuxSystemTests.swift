import CLinuxSystem
import Foundation
import Testing
@testable import CourierWire
#if canImport(Glibc)
import Glibc
#endif

/// The system calls that come through the CLinuxSystem shim: epoll's event layout and readiness
/// bits, `accept4`'s flags and the loop threads' names.
@Suite("Linux system calls through CLinuxSystem", .ownThread)
struct LinuxSystemTests {
    @Test("struct epoll_event keeps the C layout: packed to 12 bytes on x86_64, 16 bytes on arm64")
    func epollEventLayout() {
        #if arch(x86_64)
        #expect(MemoryLayout<epoll_event>.size == 12)
        #expect(MemoryLayout<epoll_event>.stride == 12)
        #expect(MemoryLayout<epoll_event>.offset(of: \.data) == 4)
        #else
        #expect(MemoryLayout<epoll_event>.size == 16)
        #expect(MemoryLayout<epoll_event>.offset(of: \.data) == 8)
        #endif
        #expect(MemoryLayout<epoll_event>.offset(of: \.events) == 0)
    }

    @Test("many descriptors ready in one turn each reach their own handler, readable and writable")
    func manyReadyAtOnce() throws {
        let loop = try EventLoop(name: "test-batch")
        defer { loop.shutdown() }
        let pairs = try (0..<8).map { _ in try Socket.makePair() }
        defer { for (a, b) in pairs { a.close(); b.close() } }
        // Data is waiting on every socket before the loop looks: one epoll_wait reports them all,
        // so every event after the first is read at its offset in the array.
        for (_, b) in pairs {
            _ = try [UInt8]("x".utf8).withUnsafeBytes { try b.write($0) }
        }
        let seen = Recorder<(Int32, EventLoop.Readiness)>()
        try onLoop(loop) {
            for (a, _) in pairs {
                let fd = a.descriptor
                try loop.register(fd: fd, interest: [.readable, .writable]) { readiness in
                    seen.append((fd, readiness))
                    loop.deregister(fd: fd)
                }
            }
        }
        #expect(seen.wait(for: pairs.count))
        let byDescriptor = Dictionary(seen.values, uniquingKeysWith: { first, _ in first })
        #expect(Set(byDescriptor.keys) == Set(pairs.map(\.0.descriptor)))
        #expect(byDescriptor.values.allSatisfy { $0 == [.readable, .writable] }, "\(byDescriptor)")
    }

    @Test("a connection reset by its peer reports readable, hangup and error")
    func resetReportsError() throws {
        let (listener, client, server) = try connectedPair()
        defer { listener.close(); client.close() }
        let loop = try EventLoop(name: "test-reset")
        defer { loop.shutdown() }
        let events = Recorder<EventLoop.Readiness>()
        try onLoop(loop) {
            try loop.register(fd: client.descriptor, interest: .readable) { readiness in
                events.append(readiness)
                loop.deregister(fd: client.descriptor)
            }
        }
        // Closing with a zero linger time sends a reset instead of a FIN.
        var linger = Glibc.linger(l_onoff: 1, l_linger: 0)
        #expect(setsockopt(server.descriptor, SOL_SOCKET, SO_LINGER, &linger, socklen_t(MemoryLayout<Glibc.linger>.size)) == 0)
        server.close()
        #expect(events.wait(for: 1))
        #expect(events.values.first?.isSuperset(of: [.readable, .hangup, .error]) == true, "\(events.values)")
    }

    @Test("accepted sockets are non-blocking and closed on exec (accept4's flags)")
    func acceptFlags() throws {
        let (listener, client, server) = try connectedPair()
        defer { listener.close(); client.close(); server.close() }
        #expect(fcntl(server.descriptor, F_GETFL) & O_NONBLOCK != 0)
        #expect(fcntl(server.descriptor, F_GETFD) & FD_CLOEXEC != 0)
    }

    @Test("a loop's thread carries the loop's name, cut to the kernel's 15 bytes")
    func threadName() throws {
        let name = "courier-name-check-\(getpid())"
        let loop = try EventLoop(name: name)
        defer { loop.shutdown() }
        try onLoop(loop) {}  // the thread has named itself before it runs work
        let tasks = try FileManager.default.contentsOfDirectory(atPath: "/proc/self/task")
        let names = tasks.compactMap { try? String(contentsOfFile: "/proc/self/task/\($0)/comm", encoding: .utf8) }
            .map { $0.trimmingCharacters(in: .newlines) }
        #expect(names.contains(String(decoding: name.utf8.prefix(15), as: UTF8.self)))
    }
}
