/// Keeps answers for ``HTTPClient``'s cache policies.
///
/// Implementations: `MemoryResponseCache`, `DiskResponseCache`, and
/// `TieredResponseCache` over both. Only successful answers of cacheable requests are
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
    /// The secret key of the identity digests in this cache's keys (see
    /// ``HTTPClient/Configuration-swift.struct/identityHeaders``): clients sharing the
    /// cache must see the same key. The default is a random key of this process.
    var identityKey: [UInt8] { get }
}

extension ResponseCache {
    /// The default: a key of this process, so identities compare within it.
    public var identityKey: [UInt8] { processIdentityKey }
}

/// A random key, the same for the whole process.
let processIdentityKey: [UInt8] = {
    var generator = SystemRandomNumberGenerator()
    return (0..<32).map { _ in UInt8.random(in: 0...255, using: &generator) }
}()
