@testable import Courier
import CourierTestServer
import Foundation
import Testing

/// A streamed body's demand: the consumer asks for more when it has taken the buffer down to
/// half; the transport acts on that later, on its own thread, and by then the buffer may be full
/// again.
@Suite("Streamed body demand")
struct BodyStreamDemandTests {
    @Test("a demand the transport acts on after the buffer filled up again is stale: the producer must stay paused")
    func staleDemand() async {
        let buffer = BodyStreamBuffer(highWaterMark: 100)
        let demands = Locked(0)
        buffer.connect(.init(onDemand: { demands.withLock { $0 += 1 } }, onCancel: {}))
        #expect(!buffer.yield(Data(count: 100)), "full: the producer stops")
        #expect(!buffer.producerMayGoOn)
        _ = await buffer.next()
        #expect(demands.withLock { $0 } == 1, "taking it all asks for more")
        #expect(buffer.producerMayGoOn)
        // Before the transport gets to the demand, it delivers what was already on its way.
        #expect(!buffer.yield(Data(count: 100)))
        #expect(!buffer.producerMayGoOn, "the demand is stale")
        _ = await buffer.next()
        #expect(demands.withLock { $0 } == 2, "a fresh demand follows when the consumer catches up")
    }
}
