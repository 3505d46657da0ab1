/// Where an answer may come from: the network, the cache, or both, and in which order.
public enum CachePolicy: Sendable, Hashable {
    /// Always the network; a fresh answer is stored for later reads.
    case remote
    /// The cache only: a miss or an expired entry is
    /// ``HTTPClientError/Code-swift.struct/cacheMiss``, and nothing is sent.
    case local
    /// A fresh cached answer if there is one, otherwise the network (stored).
    case localOrRemote
    /// The cached answer at once, if any, and the network as well: the fresh answer
    /// replaces the cached one and is delivered second. See
    /// ``HTTPClient/responses(for:)``; `send` returns the first.
    case localThenRemote
    /// The network first; if it fails, the cached answer even if expired (up to the
    /// client's ``HTTPClient/Configuration-swift.struct/maximumStaleness``), else the error.
    case remoteThenLocal
}
