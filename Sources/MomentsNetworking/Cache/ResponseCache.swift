/// Keeps answers for ``HTTPClient``'s cache policies.
///
/// Implementations: ``MemoryResponseCache``, ``DiskResponseCache``, and
/// ``TieredResponseCache`` over both. Only successful answers of cacheable requests are
/// stored: never failure statuses, GraphQL errors or mutations.
public protocol ResponseCache: Sendable {
    /// The entry for `key`, fresh or not, or `nil`.
    func cachedResponse(for key: CacheKey) async -> CachedResponse?
    /// Stores `response` under `key`, replacing any entry.
    func store(_ response: CachedResponse, for key: CacheKey) async
    /// Removes the entry for `key`.
    func removeResponse(for key: CacheKey) async
    /// Removes every entry.
    func clear() async throws
}
