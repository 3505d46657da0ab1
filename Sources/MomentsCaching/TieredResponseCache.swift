public import MomentsNetworking

/// A fast cache in front of a large one: reads try the memory tier, then the disk tier
/// (promoting what they find); writes go to both.
///
/// ```swift
/// configuration.cache = TieredResponseCache(memory: MemoryResponseCache(), disk: try DiskResponseCache(directory: url))
/// ```
public struct TieredResponseCache: ResponseCache {
    /// The fast tier, read first.
    package let memory: any ResponseCache
    /// The large tier, read when the fast one misses.
    package let disk: any ResponseCache

    /// A cache reading `memory` first, then `disk`.
    public init(memory: any ResponseCache, disk: any ResponseCache) {
        self.memory = memory
        self.disk = disk
    }

    /// The disk tier's key, so that what it keeps stays valid across processes.
    public var identityKey: [UInt8] { disk.identityKey }

    /// The entry for `key`, if any is kept and not past its maximum age.
    public func cachedResponse(for key: CacheKey) async -> CachedResponse? {
        if let hit = await memory.cachedResponse(for: key) { return hit }
        guard let hit = await disk.cachedResponse(for: key) else { return nil }
        await memory.store(hit, for: key)
        return hit
    }

    /// Keeps `response` under `key`, evicting others if needed.
    public func store(_ response: CachedResponse, for key: CacheKey) async {
        await memory.store(response, for: key)
        await disk.store(response, for: key)
    }

    /// Forgets the entry for `key`.
    public func removeResponse(for key: CacheKey) async {
        await memory.removeResponse(for: key)
        await disk.removeResponse(for: key)
    }

    /// Forgets every entry.
    public func clear() async throws {
        try await memory.clear()
        try await disk.clear()
    }
}
