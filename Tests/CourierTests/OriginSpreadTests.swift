@testable import Courier
import Testing

/// How one origin's requests spread over a transport's loops, as a value: the pools it uses,
/// their shares of the connection limit, and which pool takes each request.
@Suite("Origin spread over event loops")
struct OriginSpreadTests {
    @Test("an origin uses one pool per loop, no more pools than connections, and one with one loop",
          arguments: [(1, 8, 1), (2, 8, 2), (4, 8, 4), (4, 3, 3), (2, 1, 1), (3, 0, 1)])
    func widest(loops: Int, maxConnections: Int, expected: Int) {
        let spread = OriginSpread(loopCount: loops, maxConnections: maxConnections, mayUseHTTP2: false)
        #expect(spread.widest == expected)
        #expect(spread.poolCount == expected)
    }

    @Test("the shares of the connection limit add up to it, each at least 1, the remainder first",
          arguments: [(2, 8), (2, 7), (3, 8), (4, 3), (2, 16), (2, 1), (5, 256)])
    func shares(loops: Int, maxConnections: Int) {
        let spread = OriginSpread(loopCount: loops, maxConnections: maxConnections, mayUseHTTP2: false)
        let shares = (0..<spread.widest).map { spread.connectionLimit(ofPool: $0) }
        #expect(shares.reduce(0, +) == maxConnections)
        #expect(shares.allSatisfy { $0 >= 1 })
        #expect(shares == shares.sorted(by: >), "the remainder goes to the first pools: \(shares)")
        #expect(shares.max()! - shares.min()! <= 1)
    }

    @Test("an origin that may speak HTTP/2 starts with one pool and widens once it speaks HTTP/1.1; only once")
    func widensOnHTTP1() {
        var spread = OriginSpread(loopCount: 2, maxConnections: 8, mayUseHTTP2: true)
        #expect(spread.poolCount == 1)
        // Its first pool already has its share, so the limit holds once it widens.
        #expect(spread.connectionLimit(ofPool: 0) == 4)
        #expect(spread.choose(callersPool: 1) { _ in 0 } == 0, "a pool not in use is never chosen")
        #expect(spread.originSpeaksHTTP1() == 1..<2)
        #expect(spread.poolCount == 2)
        #expect(spread.originSpeaksHTTP1().isEmpty)
        #expect(spread.poolCount == 2)
    }

    @Test("a request goes to the caller's pool while it has a connection to spare")
    func callersPool() {
        let spread = OriginSpread(loopCount: 2, maxConnections: 8, mayUseHTTP2: false)
        let loads = [9, 0]
        #expect(spread.choose(callersPool: 0) { [0, 5][$0] } == 0, "its own loop, though the other is less loaded")
        #expect(spread.choose(callersPool: 0) { [3, 0][$0] } == 0)
        #expect(spread.choose(callersPool: 0) { loads[$0] } == 1, "its pool is at its share: the least loaded instead")
        #expect(spread.choose(callersPool: 1) { [0, 4][$0] } == 0, "its pool is at its share")
        #expect(spread.choose(callersPool: 5) { [2, 1][$0] } == 1, "not a pool of this origin: the least loaded")
        #expect(spread.choose(callersPool: -1) { [2, 1][$0] } == 1)
    }

    @Test("without a caller's pool, the least loaded pool takes the request, the first on a tie")
    func leastLoaded() {
        let spread = OriginSpread(loopCount: 3, maxConnections: 9, mayUseHTTP2: false)
        #expect(spread.choose(callersPool: nil) { _ in 0 } == 0, "one request at a time stays on the first pool")
        #expect(spread.choose(callersPool: nil) { [1, 0, 0][$0] } == 1)
        #expect(spread.choose(callersPool: nil) { [1, 1, 0][$0] } == 2)
        #expect(spread.choose(callersPool: nil) { [4, 2, 2][$0] } == 1)
        // Sixteen requests sent one after another while none finishes end up eight and eight.
        let two = OriginSpread(loopCount: 2, maxConnections: 16, mayUseHTTP2: false)
        var loads = [0, 0]
        for _ in 0..<16 { loads[two.choose(callersPool: nil) { loads[$0] }] += 1 }
        #expect(loads == [8, 8])
    }
}
