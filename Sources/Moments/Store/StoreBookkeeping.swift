import MomentsSupport

// The store's bookkeeping of work in flight, in a few named parts: what each part
// holds, and the rule that keeps it true. Each is a value in ``MomentsStore``, changed
// only on its actor.

/// Likes in flight: the chains that keep each (user, moment) pair's likes in call
/// order, and the registers whose difference with an answer waits on one of them.
struct LikeBookkeeping {
    /// The last call of each (user, moment) chain of likes, opened when its request has
    /// ended, so likes reach the server in call order. An entry lives as long as a call
    /// of its chain does.
    var chains: [LikeKey: Latch] = [:]
    /// How many likes each user has in flight (their timeline is not evicted meanwhile).
    var inFlightPerUser: [String: Int] = [:]
    /// Counts every call, so a later call for the same pair replaces an earlier one's
    /// intent (``LikeIntent/generation``).
    var calls = 0
    /// Registers whose difference with an answer waits on the liker's like in flight:
    /// refetched if that like fails.
    var deferred: Set<LikeKey> = []
    /// Registers that another instance changed while this store's like of the same
    /// register was in flight: the server's order of the two is unknown, so the register
    /// is refetched once the like's chain ends, whatever its outcome.
    var contested: Set<LikeKey> = []
}

/// Where a refresh in flight is.
enum RefreshPhase: Equatable {
    /// Reading the persisted timeline first; nothing is sent yet.
    case loading
    /// Sent to the service at this instant.
    case sent(StoreInstant)

    /// Whether the refresh's answer is certainly computed after `instant`: it was sent
    /// after it, or is not sent yet.
    func isAfter(_ instant: StoreInstant) -> Bool {
        switch self {
        case .loading: true
        case .sent(let sent): sent > instant
        }
    }
}

/// Refreshes and service requests in flight.
struct RefreshBookkeeping {
    /// Users with a refresh in flight, and where it is. A user is here from the
    /// refresh's start to its end.
    var inFlight: [String: RefreshPhase] = [:]
    /// A refresh's persistence failure, thrown by that refresh once it has emitted.
    var persistenceFailures: [String: any Error] = [:]
    /// Timelines being read from persistence: later callers wait for the same read.
    var loading: [String: Task<Bool, any Error>] = [:]
    /// When each request to the service in flight began, by request number: the
    /// oldest bounds how long retired records must be kept.
    var requestStarts: [Int: StoreInstant] = [:]
    var requestCount = 0
}

/// Timelines whose answers disagreed in an order only the server can settle.
struct ConvergenceBookkeeping {
    /// Each user whose timeline the server must settle, and the instant a settling
    /// refresh must have been sent after.
    var needed: [String: StoreInstant] = [:]
    /// The task settling each such user's timeline (one at a time per user).
    var tasks: [String: Task<Void, Never>] = [:]
}

/// Work in flight (refreshes, likes, settling, loads for subscribers), so that
/// ``MomentsStore/waitUntilIdle()`` can wait for none.
struct ActivityCount {
    var count = 0
    /// Waiters of ``MomentsStore/waitUntilIdle()``, resumed when the count falls to zero.
    var idleWaiters: [CheckedContinuation<Void, Never>] = []
}
