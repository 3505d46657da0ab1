/// Where a refresh may take a user's timeline from: the server, or the earlier answers
/// of the server that a service keeps in a cache.
///
/// A cached timeline is of unknown age. ``MomentsStore`` lets one fill in a timeline it
/// lacks, but never replace what it holds: only the server's answers do that. A
/// service without a cache answers every source from the server.
public enum TimelineSource: Sendable, Hashable, CaseIterable {
    /// The server alone: the default.
    case server
    /// The service's cache alone: a miss is the service's error, and nothing is sent.
    case cache
    /// A fresh cached timeline if the service has one, otherwise the server. When a
    /// cached timeline disagrees with what the store holds, the store asks the server.
    case cacheElseServer
    /// The cached timeline at once, if the service has one, and then the server's.
    case cacheThenServer
    /// The server; if it gives no answer (a transport failure, a timeout, a status
    /// saying it cannot answer now), the cached timeline even if stale, else the error.
    case serverElseCache

    /// Whether a refresh from this source may bring two answers (the cache's, then the
    /// server's).
    var answersTwice: Bool { self == .cacheThenServer }

    /// Whether a cached answer that disagrees with the store may be settled by asking
    /// the server: only where the caller let the server be asked after a cache hit.
    var settlesCachedAnswersWithServer: Bool { self == .cacheElseServer }
}
