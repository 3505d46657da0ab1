import MomentsSupport

/// A dictionary guarded by a mutex, for state shared with callbacks on other threads.
final class LockedDictionary<Key: Hashable & Sendable, Value: Sendable>: Sendable {
    private let storage = PThreadMutex<[Key: Value]>([:])

    subscript(key: Key) -> Value? {
        get { storage.withLock { $0[key] } }
        set { storage.withLock { $0[key] = newValue } }
    }

    @discardableResult
    func removeValue(forKey key: Key) -> Value? {
        storage.withLock { $0.removeValue(forKey: key) }
    }

    var count: Int { storage.withLock { $0.count } }
}
