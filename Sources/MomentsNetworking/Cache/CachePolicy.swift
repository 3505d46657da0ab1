import MomentsHTTP
/// Where an answer may come from: the network, the cache, or both, and in which order.
///
/// What each policy does with each outcome of the network (a cached answer is *fresh*
/// within its time to live; *stale* up to the client's maximum staleness):
///
/// | Network outcome | `.remote` | `.local` | `.localOrRemote` | `.localThenRemote` | `.remoteThenLocal` |
/// |---|---|---|---|---|---|
/// | (not asked) | — | fresh cached, else `cacheMiss` | fresh cached | cached first, then the network's | — |
/// | 2xx answer | the answer | — | the answer (no fresh cached one) | the answer, second | the answer |
/// | transport failure, timeout | the error | — | the error | the error, after the cached one | stale cached, else the error |
/// | 408, 429, 500, 502, 503, 504 | the error | — | the error | the error, after the cached one | stale cached, else the error |
/// | 401, 403, 404, 410, other 4xx | the error | — | the error | the error, after the cached one | the error |
/// | undecodable or too large | the error | — | the error | the error, after the cached one | the error |
/// | cancelled | `cancelled` | — | `cancelled` | `cancelled` | `cancelled` |
///
/// Only a 2xx answer is stored. The statuses of the `.remoteThenLocal` fallback are
/// ``HTTPClient/Configuration-swift.struct/cacheFallbackStatusCodes``.
public enum CachePolicy: Sendable, Hashable {
    /// Always the network; a fresh answer is stored for later reads.
    case remote
    /// The cache only: a miss or an expired entry is
    /// `HTTPClientError.Code.cacheMiss`, and nothing is sent.
    case local
    /// A fresh cached answer if there is one, otherwise the network (stored).
    case localOrRemote
    /// The cached answer at once, if any, and the network as well: the fresh answer
    /// replaces the cached one and is delivered second. See
    /// ``HTTPClient/responses(for:)``; `send` returns the first.
    case localThenRemote
    /// The network first; if no answer came (a transport failure, a timeout, or a status
    /// saying the server cannot answer now), the cached answer even if expired (up to the
    /// client's ``HTTPClient/Configuration-swift.struct/maximumStaleness``), else the
    /// error. An answer refusing the caller (401, 403) or saying the resource is gone
    /// (404, 410) is never papered over with the cache.
    case remoteThenLocal
}
