import MomentsSupport
import MomentsObservability
import MomentsHTTP

/// The single source of truth for many users' timelines.
///
/// It serves persisted state first (offline-first), refreshes from a ``MomentsService``,
/// applies likes optimistically, and streams every change: per user as snapshots
/// (``updates(for:)``), and store-wide as numbered changes (``changes()``).
///
/// For example:
/// ```swift
/// let store = MomentsStore(service: GraphQLMomentsService(baseURL: bff), persistence: try await SQLitePersistence.open(path: "moments.sqlite"))
/// Task {
///     for await timeline in await store.updates(for: "0") { render(timeline) }
/// }
/// try await store.refresh(userID: "0")
/// try await store.setLike(true, momentID: "2", userID: "0")
/// ```
///
/// ## The model
/// State is normalized: one record per moment id, shared by every timeline that holds
/// it, and per user a timeline of the owner's details and the ids of their moments in
/// order. A confirmed change to a moment's shared value (content and `likes`) is at
/// once in every timeline holding it, in memory and in persistence. `isLiked` belongs
/// to each viewer: it is kept with the user's timeline entry, exactly as that user's
/// newest answer gave it, and never derived from `likes` (the server decides what it
/// means; the public BFF keeps one value per moment). See <doc:ServerTruth>.
///
/// ## The ordering rule
/// Answers arrive in any order, and a whole-timeline answer is evidence about each
/// moment in it, each with its own age. The server computed an answer between the
/// moment its request left and the moment the store received it, so of two answers one
/// is certainly newer only if it was sent after the other was received. For each moment
/// (and for each timeline's owner, list and `isLiked`s):
/// - an answer certainly newer than the confirmed value replaces it;
/// - an answer certainly older changes nothing;
/// - an answer whose order is unknown changes nothing if it agrees, and otherwise the
///   store keeps what it has and asks the server again (a refetch, sent after both
///   answers arrived and so certainly newer) rather than guess;
/// - a like's answer is the authority for the liker's place in `likes`, and for the
///   liker's own `isLiked` of that moment: it was computed after the like took effect,
///   so it stands against every answer not certainly computed after it;
/// - answers from a cache or from persistence are of unknown age: they never replace a
///   value the store holds, only fill in what it lacks.
///
/// A like in flight is shown to its liker alone, on top of the confirmed value, and
/// taken back when it fails; every other user sees it once the server confirms it. So
/// a confirmed value seen by a subscriber is never followed by an older one; only a
/// rollback returns to an earlier state, and then to a confirmed one.
///
/// Only confirmed state is persisted, in the order the store applied it, one batch per
/// answer, all or nothing: emitted first, then written. Errors are thrown to the
/// caller; the streams keep the last good state.
///
/// ## The rules, as a user can check them
/// 1. A successful `setLike(x, m, u)` returns, and the store then shows to `u`, `m` with
///    `isLiked == x` and `u` in `likes` if and only if `x`, until a later call of `u` on
///    `m`, or an answer certainly computed after it, says otherwise.
/// 2. No value is shown that no server answer held, except the acting user's own likes
///    in flight, shown to that user alone.
/// 3. A subscriber never sees a confirmed value followed by an older one.
/// 4. Once nothing is in flight (``waitUntilIdle()``), memory, persistence, the last
///    value streamed and the server agree, for every user.
///
/// Rule 1 holds across evictions too: with storage that several instances share, each
/// like's answer is saved with its moment (``LikeConfirmation``) and stands there
/// against older values other instances save, so a timeline loaded again shows it.
///
/// With several instances, one user may like and unlike the same moment through two
/// instances at once. Neither instance can know the order the server applied the two
/// in: each shows its own call's answer (rule 1), and where that disagrees with a value
/// of unknown order, the server settles it with a refetch. Until then, that one register
/// may move back (the only exception to rule 3); rule 4 holds once idle.
///
/// Every decision is made by a synchronous state machine (`StoreCore`) that the actor
/// feeds with what happened and whose actions (emit, persist, send, refetch) it
/// performs; a seeded single-threaded simulation checks these rules against it over
/// millions of schedules, one to three instances, both models of `isLiked`.
public actor MomentsStore {
    /// How this store keeps timelines and delivers changes.
    public nonisolated let configuration: Configuration
    /// Now, on the store's clock.
    nonisolated var instant: StoreInstant { StoreInstant(configuration.clock.now) }
    let service: any MomentsService
    let persistence: any MomentsPersistence
    let writer: PersistenceWriter
    /// Whether batches carry when the server confirmed them (see
    /// ``MomentsPersistence/keepsConfirmationIntervals``).
    let keepsConfirmationIntervals: Bool
    let snapshots: SubscriberRegistry<MomentsDetails>
    let feed: ChangeFeed
    /// The store's spans and figures.
    let instruments: StoreInstruments
    let refreshes = SharedCall<String, MomentsDetails>()

    /// Every decision: the store feeds it events and performs its actions.
    var core: StoreCore
    /// The state as the core keeps it, for reading (the same object as `core.state`,
    /// held here too so that a read does not access the core).
    let state: StoreState
    /// Numbers like calls and requests (one counter for both).
    var lastNumber = 0
    /// Like calls waiting for their turn in their chain.
    var likeTurns: [StoreCore.CallID: CheckedContinuation<Void, Never>] = [:]
    /// Like calls whose turn came before they waited for it.
    var likeTurnsGiven: Set<StoreCore.CallID> = []
    /// A refresh's persistence failure, thrown by that refresh once it has emitted.
    var persistenceFailures: [String: any Error] = [:]
    /// Timelines being read from persistence: later callers wait for the same read.
    var loading: [String: Task<Bool, any Error>] = [:]
    /// Work in flight, for ``idle()`` (see ``ActivityCount``).
    var activity = ActivityCount()

    /// Taking calls, draining them, or shut down (see ``shutdown(gracePeriod:)``).
    var lifecycle = StoreLifecycle.running
    /// The shutdown waiting for calls in flight to end.
    var drainWait: CheckedContinuation<Void, Never>?
    /// Callers of ``run()``, waiting for their cancellation or a shutdown.
    var runWaiters: [CheckedContinuation<Void, Never>] = []

    /// Consumes the change bus, if one is configured; cancelled with the store.
    nonisolated let busConsumer = PThreadMutex<Task<Void, Never>?>(nil)

    /// Creates a store.
    /// - Parameters:
    ///   - service: Where timelines come from and likes go to.
    ///   - persistence: Where confirmed state is kept across restarts.
    ///   - configuration: Memory, change buffers, and where to log.
    public init(service: any MomentsService, persistence: any MomentsPersistence, configuration: Configuration = Configuration()) {
        self.service = service
        self.persistence = persistence
        self.configuration = configuration
        let instruments = StoreInstruments(configuration: configuration)
        self.instruments = instruments
        self.writer = PersistenceWriter(persistence: persistence, instruments: instruments.isMeasuring ? instruments : nil)
        self.keepsConfirmationIntervals = persistence.keepsConfirmationIntervals
        self.feed = ChangeFeed(bufferSize: configuration.changeBufferSize, logSize: configuration.retainedChanges, instruments: instruments)
        let onCount: (@Sendable (Int) -> Void)? = instruments.isMeasuring ? { @Sendable count in instruments.subscriberCount(count) } : nil
        self.snapshots = SubscriberRegistry<MomentsDetails>(onCount: onCount)
        let snapshots = self.snapshots
        self.core = StoreCore(
            capacity: configuration.maximumTimelinesInMemory, likesAreExclusive: configuration.changeBus == nil,
            keepsConfirmationIntervals: persistence.keepsConfirmationIntervals, logsDebug: configuration.logLevel <= .debug && configuration.logHandler != nil,
            reportsEvictions: instruments.isMeasuring, isWatched: { snapshots.hasSubscribers($0) }
        )
        self.state = core.state
        if let bus = configuration.changeBus {
            let events = bus.sharedChanges()
            busConsumer.withLock {
                $0 = Task { [weak self] in
                    for await event in events {
                        guard let self else { return }
                        await self.receive(event, from: bus)
                        self.configuration.observer?(.sharedEventApplied)
                    }
                }
            }
        }
    }

    /// A released store ends its streams as a shut-down one does: each subscriber gets
    /// the value still waiting for it, then the end.
    deinit {
        busConsumer.withLock { $0?.cancel() }
        snapshots.finishAll(keepingLast: true)
        feed.finishAll()
    }

    // MARK: - Reading

    /// A stream of `userID`'s timeline: the newest value at once if there is one (from
    /// memory or persistence), then every change, in order, and nothing when nothing
    /// changed.
    ///
    /// A slow consumer receives the newest timeline, not a backlog. The stream ends, and
    /// its resources are released, when the consuming task is cancelled or the stream is
    /// dropped. Nothing is emitted before a first timeline exists.
    ///
    /// A consumer whose timelines come every few microseconds (a burst of changes) waits
    /// for the next one by watching for up to 8 µs on its own thread before it sleeps, so
    /// that the store does not pay for waking it on every change; one whose timelines come
    /// seldom sleeps at once.
    public func updates(for userID: String) -> AsyncStream<MomentsDetails> {
        guard lifecycle.isRunning else {
            let current = state.displayedTimeline(userID)
            return AsyncStream { continuation in
                if let current { continuation.yield(current) }
                continuation.finish()
            }
        }
        let (stream, mailbox) = snapshots.subscribe(userID)
        if let current = state.displayedTimeline(userID) {
            mailbox.deliver(current)
        } else {
            beginActivity()
            Task {
                await self.loadForSubscriber(userID)
                self.endActivity()
            }
        }
        return stream
    }

    /// Every change in the store, across users, from now on: timelines loaded or
    /// replaced, moments changed (with the phase of a like), refreshes started and failed.
    ///
    /// Each consumer has a buffer of ``Configuration-swift.struct/changeBufferSize``
    /// changes; a consumer that falls further behind loses its oldest changes and
    /// receives a ``MomentsChange/Kind/gap(missed:)`` marker instead. The stream ends
    /// when the consuming task is cancelled or the stream is dropped.
    public nonisolated func changes() -> AsyncStream<MomentsChange> {
        feed.subscribe(after: nil)
    }

    /// The changes after `sequence` still retained (the latest
    /// ``Configuration-swift.struct/retainedChanges``), then every new change, with no
    /// gap and no duplicate between the two. If changes after `sequence` are no longer
    /// retained, the first element is a ``MomentsChange/Kind/gap(missed:)`` marker.
    public nonisolated func changes(after sequence: UInt64) -> AsyncStream<MomentsChange> {
        feed.subscribe(after: sequence)
    }

    /// The sequence of the latest change, 0 before the first.
    public nonisolated var lastChangeSequence: UInt64 { feed.lastSequence }

    /// `userID`'s timeline as subscribers see it, from memory or persistence; `nil` if the
    /// store has none.
    ///
    /// - Throws: ``PersistenceError`` if the persisted timeline cannot be read (also
    ///   while earlier writes that failed still cannot be written: persistence is read
    ///   only once it holds all that memory held);
    ///   ``MomentsStoreError/Code-swift.struct/shutDown`` once ``shutdown(gracePeriod:)``
    ///   has begun.
    public func details(for userID: String) async throws -> MomentsDetails? {
        try checkRunning(userID)
        _ = try await loadIfNeeded(userID)
        return state.displayedTimeline(userID)
    }

    /// How long ago the server last answered for `userID`'s timeline in memory (its
    /// owner, list and `isLiked`s); `nil` if no server answer for it arrived since it was
    /// loaded (from persistence or a cache: of unknown age) or it is not in memory.
    ///
    /// During an outage, reads keep serving what the store holds, and every failed
    /// refresh is told on ``changes()`` (`refreshFailed`, with its cause): this says how
    /// stale that is. For example:
    /// ```swift
    /// if let age = await store.timelineAge(for: "0"), age > .seconds(60) { showStaleBanner() }
    /// ```
    public func timelineAge(for userID: String) -> Duration? {
        guard let evidence = state.timelines[userID]?.evidence, evidence.sent != nil else { return nil }
        return .nanoseconds(instant.nanoseconds - evidence.received.nanoseconds)
    }

    /// The number of live subscribers of `userID`'s stream.
    public func subscriberCount(for userID: String) -> Int {
        snapshots.count(for: userID)
    }

    /// The number of live consumers of ``changes()``.
    public nonisolated var changeConsumerCount: Int { feed.consumerCount }

    /// The number of timelines held in memory.
    public var timelinesInMemory: Int { state.timelines.count }

    /// Waits until the store has nothing in flight: no refresh, like, refetch or
    /// persistence write. For orderly shutdown, and for tests.
    public func waitUntilIdle() async {
        while true {
            if activity.count > 0 {
                await withCheckedContinuation { activity.idleWaiters.append($0) }
                continue
            }
            await writer.idle()
            if activity.count == 0, !writer.isBusy { return }
        }
    }
}
