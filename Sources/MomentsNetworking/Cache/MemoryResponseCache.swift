import Synchronization

/// A ``ResponseCache`` in memory, bounded by entry count and total cost (bytes), least
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
    public let countLimit: Int
    /// The most bytes kept.
    public let costLimit: Int
    private let state = Mutex(State())

    /// - Parameters:
    ///   - countLimit: The most entries kept. The default is 1,000.
    ///   - costLimit: The most bytes kept. The default is 32 MiB.
    public init(countLimit: Int = 1_000, costLimit: Int = 32 * 1024 * 1024) {
        self.countLimit = max(1, countLimit)
        self.costLimit = max(1, costLimit)
    }

    public func cachedResponse(for key: CacheKey) -> CachedResponse? {
        state.withLock { state in
            guard state.entries[key] != nil else { return nil }
            state.clock += 1
            state.entries[key]?.lastUse = state.clock
            return state.entries[key]?.response
        }
    }

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

    public func removeResponse(for key: CacheKey) {
        state.withLock { state in
            if let old = state.entries.removeValue(forKey: key) { state.cost -= old.response.cost }
        }
    }

    public func clear() {
        state.withLock { $0 = State() }
    }

    /// The number of entries.
    public var count: Int { state.withLock { $0.entries.count } }

    /// The bytes kept.
    public var totalCost: Int { state.withLock { $0.cost } }
}
