@testable import CourierTLS
import Testing

/// The session cache's rules without OpenSSL or a clock: made-up sessions, virtual times.
@Suite("TLS session store")
struct TLSSessionStoreTests {
    typealias Store = TLSSessionStore<String>
    static let second: UInt64 = 1_000_000_000

    @Test("a TLS 1.3 ticket is handed out once, newest first; a TLS 1.2 session stays")
    func singleUseAndReusable() {
        var store = Store(capacity: 10, perPeerCapacity: 4)
        store.insert("t1", for: "a:443", lifetime: 60 * Self.second, reusable: false, now: 0)
        store.insert("t2", for: "a:443", lifetime: 60 * Self.second, reusable: false, now: 1)
        #expect(store.take(for: "a:443", now: 2) == "t2")
        #expect(store.take(for: "a:443", now: 3) == "t1")
        #expect(store.take(for: "a:443", now: 4) == nil)
        store.insert("s12", for: "b:443", lifetime: 60 * Self.second, reusable: true, now: 0)
        #expect(store.take(for: "b:443", now: 1) == "s12")
        #expect(store.take(for: "b:443", now: 2) == "s12")
        // A newer reusable session replaces the older one.
        store.insert("s12b", for: "b:443", lifetime: 60 * Self.second, reusable: true, now: 3)
        #expect(store.count(for: "b:443") == 1)
        #expect(store.take(for: "b:443", now: 4) == "s12b")
        #expect(store.count == 1)
    }

    @Test("a session expires with its lifetime; a lifetime of 0 is not stored")
    func expiry() {
        var store = Store(capacity: 10, perPeerCapacity: 4)
        store.insert("old", for: "a:443", lifetime: 10 * Self.second, reusable: true, now: 0)
        #expect(store.take(for: "a:443", now: 10 * Self.second - 1) == "old")
        #expect(store.take(for: "a:443", now: 10 * Self.second) == nil)
        #expect(store.count == 0)
        store.insert("never", for: "a:443", lifetime: 0, reusable: false, now: 0)
        #expect(store.count == 0)
        // Expired tickets are skipped in favour of a live one, and dropped.
        store.insert("short", for: "c:443", lifetime: 5, reusable: false, now: 100)
        store.insert("long", for: "c:443", lifetime: 1_000, reusable: false, now: 0)
        #expect(store.take(for: "c:443", now: 200) == "long")
        #expect(store.count == 0)
    }

    @Test("bounded per peer and in all: the oldest goes")
    func bounds() {
        var store = Store(capacity: 5, perPeerCapacity: 2)
        for index in 0..<4 {
            store.insert("a\(index)", for: "a:443", lifetime: Self.second, reusable: false, now: UInt64(index))
        }
        #expect(store.count(for: "a:443") == 2)
        for index in 0..<4 {
            store.insert("p\(index)", for: "peer\(index):443", lifetime: Self.second, reusable: false, now: 10)
        }
        #expect(store.count == 5)
        // The oldest entry in all ("a2") went first.
        #expect(store.take(for: "a:443", now: 11) == "a3")
        #expect(store.take(for: "a:443", now: 11) == nil)
        #expect(store.take(for: "peer3:443", now: 11) == "p3")
        #expect(store.count == 3)
    }

    @Test("peers are separate, and removeAll forgets one peer only")
    func peers() {
        var store = Store(capacity: 10, perPeerCapacity: 4)
        store.insert("a", for: "a:443", lifetime: Self.second, reusable: false, now: 0)
        store.insert("a8443", for: "a:8443", lifetime: Self.second, reusable: false, now: 0)
        store.insert("b", for: "b:443", lifetime: Self.second, reusable: false, now: 0)
        store.removeAll(for: "a:443")
        #expect(store.take(for: "a:443", now: 1) == nil)
        #expect(store.take(for: "a:8443", now: 1) == "a8443")
        #expect(store.take(for: "b:443", now: 1) == "b")
        #expect(store.count == 0)
    }

    @Test("a peer that refuses two offers in a row has nothing stored for a minute; a resumption clears the count")
    func refusedOffers() {
        var store = Store(capacity: 10, perPeerCapacity: 4)
        let minute = 60 * Self.second
        store.insert("t1", for: "a:443", lifetime: minute * 5, reusable: false, now: 0)
        store.offerEnded(resumed: false, for: "a:443", now: 1)
        // One refusal is not enough: the server may have lost one ticket.
        #expect(!store.isPaused("a:443", now: 2))
        #expect(store.take(for: "a:443", now: 2) == "t1")
        store.offerEnded(resumed: true, for: "a:443", now: 3)
        store.insert("t2", for: "a:443", lifetime: minute * 5, reusable: false, now: 4)
        store.offerEnded(resumed: false, for: "a:443", now: 5)
        #expect(!store.isPaused("a:443", now: 6))
        store.insert("t3", for: "a:443", lifetime: minute * 5, reusable: false, now: 6)
        store.offerEnded(resumed: false, for: "a:443", now: 7)
        // Two in a row: the peer's sessions go, and new ones are not stored for a minute.
        #expect(store.isPaused("a:443", now: 8))
        #expect(store.count(for: "a:443") == 0)
        store.insert("t4", for: "a:443", lifetime: minute * 5, reusable: false, now: 8)
        #expect(store.take(for: "a:443", now: 9) == nil)
        // Other peers are not affected.
        store.insert("b1", for: "b:443", lifetime: minute, reusable: false, now: 9)
        #expect(store.take(for: "b:443", now: 10) == "b1")
        // After the pause, sessions are stored and offered again.
        #expect(!store.isPaused("a:443", now: 7 + minute))
        store.insert("t5", for: "a:443", lifetime: minute * 5, reusable: false, now: 7 + minute)
        #expect(store.take(for: "a:443", now: 8 + minute) == "t5")
    }

    @Test("refusal records are bounded by the capacity")
    func refusalsBounded() {
        var store = Store(capacity: 3, perPeerCapacity: 1)
        for peer in 0..<50 {
            store.offerEnded(resumed: false, for: "p\(peer):443", now: UInt64(peer))
            store.offerEnded(resumed: false, for: "p\(peer):443", now: UInt64(peer))
        }
        let paused = (0..<50).filter { store.isPaused("p\($0):443", now: 100) }
        #expect(paused.count <= 3)
        #expect(paused.contains(49))
    }
}
