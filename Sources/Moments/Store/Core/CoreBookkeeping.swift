import MomentsSupport

// The core's bookkeeping of work in flight, in a few named parts: what each part holds,
// and the rule that keeps it true. Each is a value in ``StoreCore``, changed only by
// its `handle(_:at:)`.

/// Where one like call is.
enum LikePhase: Equatable {
    /// Its liker's timeline is being read from persistence; nothing is shown or sent.
    case loading
    /// Shown to its liker (if their timeline holds the moment), waiting for the call
    /// before it in its chain to end.
    case waiting
    /// Free to send its request (it may still be waiting inside the process).
    case sending
}

/// One like call, as the core knows it.
struct LikeCall {
    let key: LikeKey
    let isLiked: Bool
    var phase: LikePhase
    /// The call's intent was shown to its liker (its generation is the call's id).
    var showsIntent = false
}

/// One (user, moment) pair's like calls past loading, in call order: never empty, and
/// a chain of one call (nearly every chain) allocates nothing.
struct LikeChain {
    /// The first call: the one sending.
    private(set) var head: StoreCore.CallID
    /// The calls waiting behind it, in call order.
    private var waiting: [StoreCore.CallID] = []

    init(_ call: StoreCore.CallID) {
        head = call
    }

    var count: Int { 1 + waiting.count }

    mutating func append(_ call: StoreCore.CallID) {
        waiting.append(call)
    }

    /// Removes `call`; returns where it stood, or `nil` if it is not in the chain. A
    /// chain whose only call was removed is left as it was, for its owner to drop.
    mutating func remove(_ call: StoreCore.CallID) -> Int? {
        if call == head {
            if !waiting.isEmpty { head = waiting.removeFirst() }
            return 0
        }
        guard let index = waiting.firstIndex(of: call) else { return nil }
        waiting.remove(at: index)
        return index + 1
    }
}

/// Likes in flight: the chains that keep each (user, moment) pair's likes in call
/// order, and the registers whose difference with an answer waits on one of them.
struct LikeBook {
    /// Every call from ``StoreCore/Event/likeAsked(_:userID:momentID:isLiked:)`` to its end.
    var calls: [StoreCore.CallID: LikeCall] = [:]
    /// Each (user, moment) pair's calls past loading, in call order: the first is the
    /// one sending; each later one waits until the one before it ended, so likes reach
    /// the server in call order. A pair is here while one of its calls is.
    var chains: [LikeKey: LikeChain] = [:]
    /// How many likes each user has in flight (their timeline is not evicted meanwhile).
    var inFlightPerUser: [String: Int] = [:]
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
struct RefreshBook {
    /// Users with a refresh in flight, and where it is. A user is here from the
    /// refresh's start to its end.
    var inFlight: [String: RefreshPhase] = [:]
    /// When each request to the service in flight began, by request number: the
    /// oldest bounds how long retired records must be kept.
    var requestStarts: [StoreCore.RequestID: StoreInstant] = [:]
}

/// Timelines whose answers disagreed in an order only the server can settle.
struct SettleBook {
    /// Each user whose timeline the server must settle, and the instant a settling
    /// refresh must have been sent after. An entry may outlive its settling (a refetch
    /// that failed leaves it to the next one asked for).
    var needed: [String: StoreInstant] = [:]
    /// Users whose settling the owner runs (one at a time per user): from
    /// ``StoreCore/Action/settle(userID:)`` to the ``StoreCore/Event/settleNext(userID:)``
    /// that answers it `nil`, or ``StoreCore/Event/settleFailed(userID:)``.
    var running: Set<String> = []
}
