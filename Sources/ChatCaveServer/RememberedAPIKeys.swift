import Synchronization

/// The last API key each user presented or was given, by user id: memory only, never saved.
///
/// A store keeps only digests of keys, so this is how sign-in can return a key the user's
/// client already holds. A key here may have been retired since; ``ChatStore/knownKey(userID:)``
/// checks it against the store.
final class RememberedAPIKeys: Sendable {
    private let keys = Mutex<[String: String]>([:])

    /// Creates an empty memory.
    init() {}

    /// The key remembered for `userID`, if any.
    func key(userID: String) -> String? {
        keys.withLock { $0[userID] }
    }

    /// Remembers `key` as the last key of `userID`.
    func remember(_ key: String, userID: String) {
        keys.withLock { $0[userID] = key }
    }

    /// Forgets the key of `userID`: any key (`nil`), or only `key` when that is the one remembered.
    func forget(_ key: String?, userID: String) {
        keys.withLock { keys in
            if key == nil || keys[userID] == key { keys.removeValue(forKey: userID) }
        }
    }

    /// Forgets every key, as a restart does.
    func forgetAll() {
        keys.withLock { $0.removeAll() }
    }
}
