import MomentsSupport
public import MomentsNetworking

/// A `ResponseCache` in memory, bounded by entry count and total cost (bytes), least
/// recently used evicted first.
public final class MemoryResponseCache: ResponseCache {
    private struct Entry {
        var response: CachedResponse
        var lastUse: UInt64
    }

    private struct State {
        var entries: [CacheKey: Entry] = [:]
        var cost = 0
        var clock: UInt64 = 0
    }

    /// The most entries kept.
    package let countLimit: Int
    /// The most bytes kept.
    package let costLimit: Int
    /// How long this tier keeps an entry after it was stored, fresh or not; `nil`
    /// keeps it until evicted.
    package let maximumAge: Duration?
    private let state = PThreadMutex(State())

    /// - Parameters:
    ///   - countLimit: The most entries kept. The default is 1,000.
    ///   - costLimit: The most bytes kept. The default is 32 MiB.
    ///   - maximumAge: How long an entry is kept after it was stored, whatever its
    ///     freshness; older entries are removed when met. The default is `nil`: until
    ///     evicted.
    public init(countLimit: Int = 1_000, costLimit: Int = 32 * 1024 * 1024, maximumAge: Duration? = nil) {
        self.countLimit = max(1, countLimit)
        self.costLimit = max(1, costLimit)
        self.maximumAge = maximumAge
    }

    /// The entry for `key`, if any is kept and not past its maximum age.
    public func cachedResponse(for key: CacheKey) -> CachedResponse? {
        state.withLock { state in
            guard let entry = state.entries[key] else { return nil }
            if let maximumAge, entry.response.age() > maximumAge.seconds {
                state.entries[key] = nil
                state.cost -= entry.response.cost
                return nil
            }
            state.clock += 1
            state.entries[key]?.lastUse = state.clock
            return state.entries[key]?.response
        }
    }

    /// Keeps `response` under `key`, evicting others if needed.
    public func store(_ response: CachedResponse, for key: CacheKey) {
        guard response.cost <= costLimit else { return }
        state.withLock { state in
            state.clock += 1
            if let old = state.entries[key] { state.cost -= old.response.cost }
            state.entries[key] = Entry(response: response, lastUse: state.clock)
            state.cost += response.cost
            guard state.entries.count > countLimit || state.cost > costLimit else { return }
            // Evict least recently used entries until within 90% of both limits.
            let targetCount = max(1, countLimit - countLimit / 10)
            let targetCost = costLimit - costLimit / 10
            for (victim, entry) in state.entries.sorted(by: { $0.value.lastUse < $1.value.lastUse }) {
                guard state.entries.count > targetCount || state.cost > targetCost else { break }
                guard victim != key else { continue }
                state.entries[victim] = nil
                state.cost -= entry.response.cost
            }
        }
    }

    /// Forgets the entry for `key`.
    public func removeResponse(for key: CacheKey) {
        state.withLock { state in
            if let old = state.entries.removeValue(forKey: key) { state.cost -= old.response.cost }
        }
    }

    /// Forgets every entry.
    public func clear() {
        state.withLock { $0 = State() }
    }

    /// The number of entries.
    public var count: Int { state.withLock { $0.entries.count } }

    /// The bytes kept.
    public var totalCost: Int { state.withLock { $0.cost } }
}
