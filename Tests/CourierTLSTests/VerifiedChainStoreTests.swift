@testable import CourierTLS
import Testing

/// The verified-chain cache's rules without OpenSSL or a clock: made-up chains, virtual times.
@Suite("Verified chain store")
struct VerifiedChainStoreTests {
    typealias Store = VerifiedChainStore<String>
    static let second: UInt64 = 1_000_000_000
    /// A chain valid from wall second 1,000 to 2,000.
    static let validity = Store.Validity(notBefore: 1_000, notAfter: 2_000)

    static func key(_ name: String = "example.com", ip: Bool = false, chain: [UInt8] = [1, 2, 3]) -> Store.Key {
        Store.Key(serverName: name, isIPAddress: ip, presented: chain)
    }

    static func at(_ monotonicSeconds: UInt64, wall: Int64 = 1_500) -> Store.Moment {
        Store.Moment(monotonic: monotonicSeconds * second, wallSeconds: wall)
    }

    @Test("a chain is found again only for the same certificates, the same name and the same kind of name")
    func sameKeyOnly() {
        var store = Store(capacity: 8, lifetime: 600 * Self.second)
        store.insert("verified", for: Self.key(), validity: Self.validity, now: Self.at(0))
        #expect(store.chain(for: Self.key(), now: Self.at(1)) == "verified")
        #expect(store.chain(for: Self.key("other.example.com"), now: Self.at(1)) == nil)
        #expect(store.chain(for: Self.key(ip: true), now: Self.at(1)) == nil)
        #expect(store.chain(for: Self.key(chain: [1, 2, 4]), now: Self.at(1)) == nil)
        #expect(store.chain(for: Self.key(chain: [1, 2]), now: Self.at(1)) == nil)
        #expect(store.count == 1)
    }

    @Test("an entry is used for its lifetime by the monotonic clock, then dropped")
    func lifetime() {
        var store = Store(capacity: 8, lifetime: 600 * Self.second)
        store.insert("verified", for: Self.key(), validity: Self.validity, now: Self.at(10))
        #expect(store.chain(for: Self.key(), now: Store.Moment(monotonic: 610 * Self.second - 1, wallSeconds: 1_500)) == "verified")
        #expect(store.chain(for: Self.key(), now: Self.at(610)) == nil)
        #expect(store.count == 0)
    }

    @Test("an entry is used only while the wall clock is inside the chain's validity, at both ends")
    func validityPeriod() {
        var store = Store(capacity: 8, lifetime: 600 * Self.second)
        store.insert("verified", for: Self.key(), validity: Self.validity, now: Self.at(0))
        #expect(store.chain(for: Self.key(), now: Self.at(1, wall: 1_999)) == "verified")
        // OpenSSL counts a certificate as expired from its notAfter second on.
        #expect(store.chain(for: Self.key(), now: Self.at(2, wall: 2_000)) == nil)
        #expect(store.count == 0)
        // The wall clock going back before notBefore makes the entry unusable too.
        store.insert("verified", for: Self.key(), validity: Self.validity, now: Self.at(3))
        #expect(store.chain(for: Self.key(), now: Self.at(4, wall: 1_000)) == "verified")
        #expect(store.chain(for: Self.key(), now: Self.at(5, wall: 999)) == nil)
        #expect(store.count == 0)
    }

    @Test("a chain outside its validity, or with a lifetime of 0, is not stored")
    func notStored() {
        var store = Store(capacity: 8, lifetime: 600 * Self.second)
        store.insert("early", for: Self.key(), validity: Self.validity, now: Self.at(0, wall: 999))
        store.insert("late", for: Self.key(), validity: Self.validity, now: Self.at(0, wall: 2_000))
        #expect(store.count == 0)
        var off = Store(capacity: 8, lifetime: 0)
        off.insert("verified", for: Self.key(), validity: Self.validity, now: Self.at(0))
        #expect(off.count == 0)
        #expect(off.chain(for: Self.key(), now: Self.at(0)) == nil)
    }

    @Test("storing under a present key replaces the chain and restarts its lifetime")
    func replace() {
        var store = Store(capacity: 8, lifetime: 100 * Self.second)
        store.insert("first", for: Self.key(), validity: Self.validity, now: Self.at(0))
        store.insert("second", for: Self.key(), validity: Self.validity, now: Self.at(90))
        #expect(store.count == 1)
        #expect(store.chain(for: Self.key(), now: Self.at(150)) == "second")
    }

    @Test("past the capacity the unusable entries go first, then the oldest")
    func capacity() {
        var store = Store(capacity: 3, lifetime: 100 * Self.second)
        let short = Store.Validity(notBefore: 1_000, notAfter: 1_600)
        store.insert("a", for: Self.key(chain: [1]), validity: Self.validity, now: Self.at(0))
        store.insert("b", for: Self.key(chain: [2]), validity: Self.validity, now: Self.at(50))
        store.insert("c", for: Self.key(chain: [3]), validity: short, now: Self.at(60))
        // At 120 s "a" has outlived its lifetime: it goes, and "b" stays although it is older than "d".
        store.insert("d", for: Self.key(chain: [4]), validity: Self.validity, now: Self.at(120))
        #expect(store.count == 3)
        #expect(store.chain(for: Self.key(chain: [2]), now: Self.at(121)) == "b")
        #expect(store.chain(for: Self.key(chain: [3]), now: Self.at(121)) == "c")
        // At wall second 1,700 "c" is past its validity: it goes before the older "b".
        store.insert("e", for: Self.key(chain: [5]), validity: Self.validity, now: Self.at(122, wall: 1_700))
        #expect(store.count == 3)
        #expect(store.chain(for: Self.key(chain: [2]), now: Self.at(123)) == "b")
        #expect(store.chain(for: Self.key(chain: [3]), now: Self.at(123)) == nil)
        // With every entry usable, the oldest goes: "b".
        store.insert("f", for: Self.key(chain: [6]), validity: Self.validity, now: Self.at(124))
        #expect(store.count == 3)
        #expect(store.chain(for: Self.key(chain: [2]), now: Self.at(125)) == nil)
        for (chain, name) in [([4], "d"), ([5], "e"), ([6], "f")] as [([UInt8], String)] {
            #expect(store.chain(for: Self.key(chain: chain), now: Self.at(125)) == name)
        }
    }
}
