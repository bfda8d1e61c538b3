import Courier
import Foundation
import Glibc
import Synchronization

/// Sends one request straight through a transport (no pipeline), as the native transport tests do.
func fetch(_ transport: any Transport, _ url: URL, method: HTTPRequest.Method = .get, body: Data = Data(),
           headers: HTTPHeaders = [:], timeout: Duration = .seconds(10), maxBodySize: Int = 64 << 20,
           observer: any TransportObserver = IgnoringTransportObserver()) async throws(HTTPConnectionError) -> HTTPResponse {
    let request = TransportRequest(method: method, url: url, headers: headers, body: body,
                                   timeout: timeout, maxResponseBodySize: maxBodySize)
    return try await transport.send(request, observer: observer)
}

/// Runs `body` and returns the `HTTPConnectionError` it throws, or `nil` when it succeeds.
func failure(_ body: () async throws(HTTPConnectionError) -> HTTPResponse) async -> HTTPConnectionError? {
    do {
        _ = try await body()
        return nil
    } catch {
        return error
    }
}

/// A transport observer that records what it hears.
final class RecordingObserver: TransportObserver {
    struct Progress: Equatable, Sendable {
        let count: Int
        let soFar: Int64
        let expected: Int64?
    }

    let observesBody: Bool
    private let heads = Mutex<[Int]>([])
    private let chunks = Mutex<[Progress]>([])

    init(observesBody: Bool = true) {
        self.observesBody = observesBody
    }

    var headStatuses: [Int] { heads.withLock { $0 } }
    var progress: [Progress] { chunks.withLock { $0 } }

    func transportDidReceiveHead(_ head: HTTPResponse.Head) {
        heads.withLock { $0.append(head.status.code) }
    }

    func transportDidReceiveBody(_ data: Data, bytesSoFar: Int64, expectedTotal: Int64?) {
        chunks.withLock { $0.append(Progress(count: data.count, soFar: bytesSoFar, expected: expectedTotal)) }
    }
}

/// How many sockets of this process are connected to `port` on the other end (client sides of
/// connections to a local server), from /proc/self/fd and /proc/net/tcp{,6}.
func clientSocketCount(toPort port: Int) -> Int {
    let fdDirectory = "/proc/self/fd"
    guard let entries = try? FileManager.default.contentsOfDirectory(atPath: fdDirectory) else { return -1 }
    var inodes = Set<String>()
    for entry in entries {
        guard let target = try? FileManager.default.destinationOfSymbolicLink(atPath: "\(fdDirectory)/\(entry)"),
              target.hasPrefix("socket:[") else { continue }
        inodes.insert(String(target.dropFirst(8).dropLast()))
    }
    let portHex = String(format: "%04X", port)
    var count = 0
    for table in ["/proc/net/tcp", "/proc/net/tcp6"] {
        // /proc files report no size: read to the end rather than trusting String(contentsOfFile:).
        guard let handle = FileHandle(forReadingAtPath: table) else { continue }
        let text = String(decoding: handle.readDataToEndOfFile(), as: UTF8.self)
        try? handle.close()
        for line in text.split(separator: "\n").dropFirst() {
            let fields = line.split(separator: " ", omittingEmptySubsequences: true)
            guard fields.count > 9 else { continue }
            let remote = fields[2]
            let state = fields[3]
            // Skip TIME_WAIT (06) and CLOSE (07): no descriptor holds them.
            guard remote.hasSuffix(":" + portHex), state != "06", state != "07", inodes.contains(String(fields[9])) else { continue }
            count += 1
        }
    }
    return count
}

/// Runs blocking work (child processes, polling loops) on a thread of its own, so that it never
/// holds one of the few Swift concurrency threads that the tests running in parallel need.
func blocking<T: Sendable>(_ work: @escaping @Sendable () throws -> T) async throws -> T {
    try await withCheckedThrowingContinuation { continuation in
        let thread = Thread {
            continuation.resume(with: Result { try work() })
        }
        thread.start()
    }
}

/// Polls an asynchronous `condition` until it holds or `timeout` passes; returns whether it held.
func eventuallyAsync(timeout: Duration = .seconds(5), _ condition: @Sendable () async -> Bool) async -> Bool {
    let clock = ContinuousClock()
    let deadline = clock.now + timeout
    while clock.now < deadline {
        if await condition() { return true }
        try? await Task.sleep(for: .milliseconds(5))
    }
    return await condition()
}
