import MomentsObservability

/// Every decision of a ``MomentsStore``, in one synchronous state machine.
///
/// The store's actor feeds it what happened (an ``Event``: a call asked, an answer
/// arrived, a request ended, another instance committed) and performs what it returns
/// (``Action``s: emit, persist, send, load, refetch), in order. The core has no
/// `await`, reads no clock (each event comes with the instant it happened, and with a
/// ``ClockReading`` where wall-clock time is needed) and does no I/O: the same events
/// give the same actions, so a single-threaded simulator can drive it through millions
/// of schedules and replay any of them from its seed.
///
/// It holds the normalized state (``StoreState``, which applies answers under the
/// ordering rule) and the bookkeeping of work in flight (``LikeBook``, ``RefreshBook``,
/// ``SettleBook``). The actor keeps what only an owner of tasks can: the tasks
/// themselves, waiting callers, subscribers, the persistence writer.
struct StoreCore {
    /// A like call, numbered by the owner in call order (it is also the generation of
    /// the call's intent: a later call's replaces an earlier one's).
    typealias CallID = Int
    /// A request to the service, numbered by the owner.
    typealias RequestID = Int

    /// What happened, fed to ``handle(_:at:)``.
    enum Event {
        /// A refresh of `userID` began, its request numbered `request`: sent now if
        /// memory holds the timeline, else once it is read (``Action/load(userID:)``,
        /// then ``refreshSent(userID:request:)``).
        case refreshBegan(userID: String, request: RequestID)
        /// The refresh of `userID` sent its request, after reading the persisted timeline.
        case refreshSent(userID: String, request: RequestID)
        /// An answer to `userID`'s refresh sent at `sent` arrived (several may, for a
        /// cache then the network). The reading dates what is written, for storage
        /// that keeps confirmation intervals.
        case refreshAnswered(userID: String, answer: MomentsAnswer, sent: StoreInstant, source: TimelineSource)
        /// The refresh of `userID` ended, with `request` if it sent one.
        case refreshEnded(userID: String, request: RequestID?)
        /// A persisted timeline was read (`nil`: none).
        case loaded(userID: String, details: MomentsDetails?)
        /// A like call began: its liker's timeline is kept in memory until it ends.
        case likeAsked(CallID, userID: String, momentID: String, isLiked: Bool)
        /// The liker's timeline is in memory if it exists: the like is shown to its
        /// liker and joins its chain; its request is counted from now.
        case likeReady(CallID)
        /// A like call ended: answered (its request sent at `sent`), failed, or never
        /// sent. The reading dates what is written, as for a refresh's answer.
        case likeEnded(CallID, LikeOutcome)
        /// Another instance committed (or, after an interruption, the shared storage's
        /// state was read again); it needs a reading of the clocks.
        case sharedCommitted(SharedCommit, resynchronising: Bool)
        /// The users persistence lists as holding `momentID`, which the server must settle
        /// though no timeline in memory holds it.
        case holdersFound(momentID: String, holders: [String])
        /// The owner's settling of `userID` asks what to do next.
        case settleNext(userID: String)
        /// The refetch settling `userID` failed: the next refresh settles it.
        case settleFailed(userID: String)
    }

    /// How a like call ended.
    enum LikeOutcome {
        /// The server answered a request sent at `sent`.
        case answered(MomentsAnswer, sent: StoreInstant)
        /// The request failed; `mayHaveReachedServer` unless the client knows nothing
        /// was sent.
        case failed(mayHaveReachedServer: Bool)
        /// The call ended before sending anything (cancelled, or its timeline unreadable).
        case notSent
    }

    /// What the owner does, in order.
    enum Action {
        /// Publish on the change feed.
        case emit(MomentsChange.Kind)
        /// Send new snapshots to these users' subscribers.
        case deliverSnapshots(Set<String>)
        /// Write the next batch of confirmed state (``takeBatch()``), in order with the
        /// batches before it. (The batch waits in the core: its dates make it a value
        /// the runtime lays out, too costly to carry in every action.)
        case persist
        /// Read `userID`'s persisted timeline, then report ``Event/loaded(userID:details:)``.
        case load(userID: String)
        /// The like call may send its request now.
        case send(CallID)
        /// Settle `userID`'s timeline with the server: a task that asks
        /// ``Event/settleNext(userID:)`` until answered nothing.
        case settle(userID: String)
        /// Refresh `userID` to settle it, then ask again. `joining`: a refresh is in
        /// flight, and its failure is not the settling's (the loop asks again).
        case refetch(userID: String, joining: Bool)
        /// Find who holds each moment in persistence (``Event/holdersFound(momentID:holders:)``):
        /// the server must settle them though no timeline in memory does.
        case findHolders(momentIDs: [String])
        /// Drop cached answers holding `momentID` (its liker's among them).
        case invalidateCachedTimelines(momentID: String, liker: String)
        /// Timelines were evicted (how many; for the store's figures).
        case evicted(count: Int)
        /// Fail the call with `error`: the answer it got is refused.
        case refuse(any Error)
        /// A log record (debug records only when ``logsDebug``).
        case log(LogRecord.Level, String, userID: String, error: (any Error)? = nil)
    }

    /// Rules deliberately broken, for showing that the simulation's checks are not
    /// vacuous: a store never has any (only tests make a core with them).
    struct BrokenRules: OptionSet {
        let rawValue: Int
        /// A like's answer is applied as a refresh's: not the authority for its liker's
        /// register of the moment.
        static let likeAnswerIsNoAuthority = BrokenRules(rawValue: 1 << 0)
        /// Nothing is ever settled with the server: answers of unknown order stay as
        /// they were applied.
        static let neverSettle = BrokenRules(rawValue: 1 << 1)
        /// A pair's likes are sent at once, not one after another in call order.
        static let likesUnchained = BrokenRules(rawValue: 1 << 2)
        /// A failed like's intent stays shown to its liker.
        static let noRollback = BrokenRules(rawValue: 1 << 3)
        /// A cached answer is taken as the server's, received now: as new as any.
        static let cacheIsFresh = BrokenRules(rawValue: 1 << 4)
    }

    let state: StoreState
    /// Empty, but in tests of the simulation's checks.
    var brokenRules: BrokenRules = []
    var likes = LikeBook()
    var refreshes = RefreshBook()
    /// The storage of the last actions returned (see ``recycle(_:)``).
    private var spareActions: [Action] = []
    /// Batches to write, in order, one per ``Action/persist``.
    private var batches: [PersistenceBatch] = []
    var settling = SettleBook()
    /// Whether batches carry when the server confirmed them.
    let keepsConfirmationIntervals: Bool
    /// Whether debug records are made: checked before one is built.
    let logsDebug: Bool
    /// Whether ``Action/evicted(count:)`` is reported.
    let reportsEvictions: Bool
    /// Whether `userID`'s timeline has subscribers (spared from eviction). It is read
    /// here, never changed.
    let isWatched: (String) -> Bool

    init(
        capacity: Int, likesAreExclusive: Bool, keepsConfirmationIntervals: Bool, logsDebug: Bool, reportsEvictions: Bool,
        isWatched: @escaping (String) -> Bool
    ) {
        state = StoreState(capacity: capacity, likesAreExclusive: likesAreExclusive)
        self.keepsConfirmationIntervals = keepsConfirmationIntervals
        self.logsDebug = logsDebug
        self.reportsEvictions = reportsEvictions
        self.isWatched = isWatched
    }

    /// Takes in what happened at `now` (with a `reading` of the wall clock where the event
    /// needs one); returns what to do, in order.
    mutating func handle(_ event: consuming Event, at now: StoreInstant, reading: ClockReading? = nil) -> [Action] {
        var actions: [Action] = []
        swap(&actions, &spareActions)
        actions.removeAll(keepingCapacity: true)
        switch consume event {
        case .refreshBegan(let userID, let request):
            if beginRefresh(of: userID, request: request, at: now) { actions.append(.load(userID: userID)) }
        case .refreshSent(let userID, let request):
            sendRefresh(of: userID, request: request, at: now)
        case .refreshAnswered(let userID, let answer, let sent, let source):
            answerRefresh(answer, for: userID, sent: sent, source: source, reading: reading, at: now, into: &actions)
        case .refreshEnded(let userID, let request):
            endRefresh(of: userID, request: request)
        case .loaded(let userID, let details):
            applyLoaded(details, for: userID, at: now, into: &actions)
        case .likeAsked(let call, let userID, let momentID, let isLiked):
            askLike(call, userID: userID, momentID: momentID, isLiked: isLiked)
        case .likeReady(let call):
            readyLike(call, at: now, into: &actions)
        case .likeEnded(let call, let outcome):
            endLike(call, outcome, reading: reading, at: now, into: &actions)
        case .sharedCommitted(let commit, let resynchronising):
            guard let reading else { break }
            if !resynchronising { forgetRemoved(commit, into: &actions) }
            applyShared(commit, reading: reading, at: now, into: &actions)
        case .holdersFound(let momentID, let holders):
            guard let holder = holders.min() else { break }
            debug("no timeline in memory holds \(momentID), which the server must settle; refetching a timeline the storage lists", userID: holder, into: &actions)
            scheduleSettling(holder, since: now, into: &actions)
        case .settleNext(let userID):
            settleNext(userID, into: &actions)
        case .settleFailed(let userID):
            settling.running.remove(userID)
        }
        return actions
    }

    /// Gives back the actions ``handle(_:at:)`` returned, once performed: their storage
    /// holds the next event's (an event allocates nothing for its actions).
    mutating func recycle(_ actions: consuming [Action]) {
        spareActions = actions
    }

    /// Queues `batch` for the owner to write.
    mutating func persist(_ batch: consuming PersistenceBatch, into actions: inout [Action]) {
        batches.append(batch)
        actions.append(.persist)
    }

    /// The batch of the next ``Action/persist``, oldest first.
    mutating func takeBatch() -> PersistenceBatch {
        batches.isEmpty ? PersistenceBatch() : batches.removeFirst()
    }

    // MARK: - Reading

    /// Marks `userID`'s timeline as just used; whether memory holds it.
    mutating func markUsed(_ userID: String) -> Bool {
        state.touch(userID)
    }

    /// The number of like calls of `userID` in flight.
    func likeCallsInFlight(of userID: String) -> Int {
        likes.inFlightPerUser[userID] ?? 0
    }

    // MARK: - Events without actions
    // The owner calls these directly: the events they take return no action (or, for a
    // refresh's beginning, only the load this tells the need of) and need no instant.

    /// A refresh of `userID` began (``Event/refreshBegan(userID:request:)``): its request
    /// is sent now if memory holds the timeline; else once the persisted one is read,
    /// and then it returns `true`.
    mutating func beginRefresh(of userID: String, request: RequestID, at now: StoreInstant) -> Bool {
        guard state.touch(userID) else {
            refreshes.inFlight[userID] = .loading
            return true
        }
        sendRefresh(of: userID, request: request, at: now)
        return false
    }

    /// The refresh of `userID` sends its request now.
    private mutating func sendRefresh(of userID: String, request: RequestID, at now: StoreInstant) {
        refreshes.inFlight[userID] = .sent(now)
        refreshes.requestStarts[request] = now
    }

    /// The refresh of `userID` ended, with `request` if it sent one
    /// (``Event/refreshEnded(userID:request:)``).
    mutating func endRefresh(of userID: String, request: RequestID?) {
        refreshes.inFlight[userID] = nil
        if let request { endRequest(request) }
    }

    /// A like call began (``Event/likeAsked(_:userID:momentID:isLiked:)``).
    mutating func askLike(_ call: CallID, userID: String, momentID: String, isLiked: Bool) {
        likes.calls[call] = LikeCall(key: LikeKey(userID: userID, momentID: momentID), isLiked: isLiked, phase: .loading)
        likes.inFlightPerUser[userID, default: 0] += 1
    }

    // MARK: - Requests and memory

    mutating func endRequest(_ request: RequestID) {
        refreshes.requestStarts[request] = nil
        if state.retiredCount > 0 { state.sweepRetired(oldestRequest: refreshes.requestStarts.values.min()) }
    }

    /// Evicts least recently used timelines, sparing `current` (the one just used) and
    /// every timeline with subscribers, likes or refreshes in flight.
    mutating func evictIfNeeded(sparing current: String, into actions: inout [Action]) {
        // Within capacity (nearly always), nothing is copied for the pinning rule.
        guard state.timelines.count > state.capacity else {
            if reportsEvictions { actions.append(.evicted(count: 0)) }
            return
        }
        let likes = likes
        let refreshes = refreshes
        let isWatched = isWatched
        let evicted = state.evictIfNeeded { userID in
            userID == current || isWatched(userID) || likes.inFlightPerUser[userID] != nil || refreshes.inFlight[userID] != nil
        }
        if reportsEvictions { actions.append(.evicted(count: evicted.count)) }
        if !evicted.isEmpty { state.sweepRetired(oldestRequest: refreshes.requestStarts.values.min()) }
    }

    // MARK: - Records

    /// A debug record of an ordering decision, built only when ``logsDebug``.
    func debug(_ message: @autoclosure () -> String, userID: String, into actions: inout [Action]) {
        guard logsDebug else { return }
        actions.append(.log(.debug, message(), userID: userID, error: nil))
    }

    /// `*` if `userID`'s timeline holds `momentID` as liked, for debug records.
    func shownIsLiked(_ momentID: String, of userID: String) -> String {
        state.displayedTimeline(userID)?.moment(withID: momentID)?.isLiked == true ? "*" : ""
    }

    /// `momentID`'s confirmed likers, for debug records.
    func confirmedLikers(_ momentID: String) -> String {
        guard let likes = state.records[momentID]?.value.likes else { return "\(momentID)[?]" }
        return "\(momentID)[\(likes.map(\.id).joined(separator: ","))]"
    }
}
