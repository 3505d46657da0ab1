public import MomentsNetworking
import MomentsSupport

/// The single source of truth for many users' timelines.
///
/// It serves persisted state first (offline-first), refreshes from a ``MomentsService``,
/// applies likes optimistically, and streams every change: per user as snapshots
/// (``updates(for:)``), and store-wide as numbered changes (``changes()``).
///
/// For example:
/// ```swift
/// let store = MomentsStore(service: GraphQLMomentsService(baseURL: bff), persistence: try SQLitePersistence(path: "moments.sqlite"))
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
/// - a like's answer is the authority for the liker's place in `likes`: it stands
///   against every answer not certainly computed after it;
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
public actor MomentsStore {
    /// How this store keeps timelines and delivers changes.
    public nonisolated let configuration: Configuration
    private let service: any MomentsService
    let persistence: any MomentsPersistence
    private let writer: PersistenceWriter
    /// Whether batches carry when the server confirmed them (see
    /// ``MomentsPersistence/keepsConfirmationIntervals``).
    private let keepsConfirmationIntervals: Bool
    private let snapshots: SubscriberRegistry<MomentsDetails>
    let feed: ChangeFeed
    /// The store's spans and figures.
    let instruments: StoreInstruments
    private let refreshes = SharedCall<String, MomentsDetails>()

    let state: StoreState
    /// The last call of each (user, moment) chain of likes, opened when its request has
    /// ended, so likes reach the server in call order.
    var likeChains: [LikeKey: Latch] = [:]
    private var likesInFlight: [String: Int] = [:]
    private var likeCalls = 0
    /// Registers whose difference with an answer waits on the liker's like in flight.
    var deferredLikers: Set<LikeKey> = []
    /// Registers that another instance changed while this store's like of the same
    /// register was in flight: the server's order of the two is unknown, so the register
    /// is refetched once the like's chain ends, whatever its outcome.
    var contestedLikers: Set<LikeKey> = []
    /// Users with a refresh in flight: when it was sent (`nil` while reading persistence first).
    private var refreshesInFlight: [String: StoreInstant?] = [:]
    private var persistenceFailures: [String: any Error] = [:]
    /// Users whose timeline the server must settle, and since when.
    private var convergenceNeeded: [String: StoreInstant] = [:]
    private var convergenceTasks: [String: Task<Void, Never>] = [:]
    private var loading: [String: Task<Bool, any Error>] = [:]
    private var activity = 0
    private var idleWaiters: [CheckedContinuation<Void, Never>] = []
    /// When each request to the service in flight began, by request.
    private var requestStarts: [Int: StoreInstant] = [:]
    private var requestCount = 0
    /// Consumes the change bus, if one is configured; cancelled with the store.
    private nonisolated let busConsumer = PThreadMutex<Task<Void, Never>?>(nil)

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
        self.writer = PersistenceWriter(persistence: persistence, instruments: instruments)
        self.keepsConfirmationIntervals = persistence.keepsConfirmationIntervals
        self.feed = ChangeFeed(bufferSize: configuration.changeBufferSize, logSize: configuration.retainedChanges, instruments: instruments)
        let onCount: (@Sendable (Int) -> Void)? = instruments.isMeasuring ? { @Sendable count in instruments.subscriberCount(count) } : nil
        self.snapshots = SubscriberRegistry<MomentsDetails>(onCount: onCount)
        self.state = StoreState(capacity: configuration.maximumTimelinesInMemory, likesAreExclusive: configuration.changeBus == nil)
        if let bus = configuration.changeBus {
            let events = bus.sharedChanges()
            busConsumer.withLock {
                $0 = Task { [weak self] in
                    for await event in events {
                        guard let self else { return }
                        await self.receive(event, from: bus)
                        await self.countSharedEvent()
                    }
                }
            }
        }
    }

    deinit {
        busConsumer.withLock { $0?.cancel() }
        snapshots.finishAll()
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
    public func updates(for userID: String) -> AsyncStream<MomentsDetails> {
        let (stream, continuation) = snapshots.subscribe(userID)
        if let current = state.displayedTimeline(userID) {
            continuation.yield(current)
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
    /// - Throws: ``PersistenceError`` if the persisted timeline cannot be read.
    public func details(for userID: String) async throws -> MomentsDetails? {
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
        return .nanoseconds(StoreInstant.now.nanoseconds - evidence.received.nanoseconds)
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
            if activity > 0 {
                await withCheckedContinuation { idleWaiters.append($0) }
                continue
            }
            await writer.idle()
            if activity == 0, !writer.isBusy { return }
        }
    }

    // MARK: - Refreshing

    /// Fetches `userID`'s timeline from the service, applies it under the ordering rule,
    /// emits what changed, and persists it.
    ///
    /// Persisted state is emitted first, if none was in memory. Concurrent refreshes of
    /// one user share a single fetch. A caller's cancellation never fails the others: the
    /// fetch stops when its caller is cancelled, and a caller still waiting fetches again;
    /// once every caller has been cancelled, nothing is fetched.
    ///
    /// - Parameters:
    ///   - userID: The user whose timeline to fetch.
    ///   - cachePolicy: Where the service may take the answer from (for
    ///     ``GraphQLMomentsService``, its client's response cache). The default is
    ///     `.remote`: always the network. With `.localThenRemote` the cached timeline
    ///     is applied first, then the network's. A cached answer is of unknown age: it
    ///     fills in a timeline the store lacks, but never replaces what the store holds.
    /// - Returns: The timeline as subscribers now see it.
    /// - Throws: The service's error (an `HTTPClientError` for ``GraphQLMomentsService``),
    ///   ``MomentsStoreError`` for an answer the store refuses, `CancellationError` if the
    ///   calling task is cancelled; the streams and the persisted state then keep the
    ///   last good state. A ``PersistenceError`` if the answer could not be persisted (it
    ///   is still applied and emitted, and persisted with the next write).
    @discardableResult
    public func refresh(userID: String, cachePolicy: CachePolicy = .remote) async throws -> MomentsDetails {
        try await TraceContext.span("moments.store.refresh", tracer: instruments.tracer) { span in
            span?.setAttribute("moments.user_id", .string(userID))
            do {
                return try await refreshes.run(userID) {
                    try await performRefresh(userID, cachePolicy: cachePolicy)
                }
            } catch where Task.isCancelled {
                throw CancellationError()
            }
        }
    }

    private func performRefresh(_ userID: String, cachePolicy: CachePolicy) async throws -> MomentsDetails {
        beginActivity()
        defer {
            refreshesInFlight[userID] = nil
            if !persistenceFailures.isEmpty { persistenceFailures[userID] = nil }
            endActivity()
        }
        feed.publish(.refreshStarted(userID: userID))
        if !state.touch(userID) {
            refreshesInFlight[userID] = .some(nil)
            do {
                _ = try await loadIfNeeded(userID)
            } catch {
                // A damaged persisted timeline is replaced by the server's answer below.
                log(.warning, "the persisted timeline cannot be read; refreshing from the service", userID: userID, error: error)
            }
        }
        let started = StoreInstant.now
        refreshesInFlight[userID] = started
        let request = beginRequest(at: started)
        defer { endRequest(request) }
        var last: MomentsDetails?
        do {
            if cachePolicy == .localThenRemote {
                try await service.refreshAnswers(userID: userID, cachePolicy: cachePolicy) { answer in
                    try await self.receiveRefreshAnswer(answer, for: userID, callStarted: started, cachePolicy: cachePolicy)
                }
            } else {
                let answer = try await service.refreshAnswer(userID: userID, cachePolicy: cachePolicy)
                try await receiveRefreshAnswer(answer, for: userID, callStarted: started, cachePolicy: cachePolicy)
            }
            last = state.displayedTimeline(userID)
        } catch {
            feed.publish(.refreshFailed(userID: userID, error: error))
            throw error
        }
        if !persistenceFailures.isEmpty, let failure = persistenceFailures[userID] { throw failure }
        guard let last else {
            throw MomentsStoreError(code: .noAnswer, userID: userID, momentID: "")
        }
        return last
    }

    private func receiveRefreshAnswer(
        _ answer: MomentsAnswer, for userID: String, callStarted: StoreInstant, cachePolicy: CachePolicy
    ) async throws {
        let (applied, evidence) = try apply(answer, for: userID, callStarted: callStarted, likeOf: nil)
        if applied.needsConvergence {
            switch answer.origin {
            case .server: scheduleConvergence(userID, since: evidence.received)
            // A cached answer is settled by the network when the policy allows it.
            case .cache where cachePolicy == .localOrRemote: scheduleConvergence(userID, since: evidence.received)
            case .cache: break
            }
        }
        do {
            try await TraceContext.span("moments.persistence.save", tracer: instruments.tracer) { _ in
                try await writer.write(applied.batch)
            }
        } catch {
            persistenceFailures[userID] = error
        }
    }

    // MARK: - Liking

    /// Has `userID` like or unlike a moment of their timeline, optimistically.
    ///
    /// The change is emitted at once to `userID` alone (`isLiked` set, the user added to
    /// or removed from `likes`, in their own timeline only); the mutation is sent; the
    /// server's answer is applied, emitted and persisted, and the moment changes in
    /// every timeline that holds it. On failure the change is taken back, emitted to
    /// `userID`, and the error thrown: no other user ever saw it. Concurrent calls for one
    /// moment reach the server in call order; the last call's state wins.
    ///
    /// - Returns: The timeline as subscribers see it after the answer.
    /// - Throws: The service's error, after taking the change back; `CancellationError`
    ///   if the calling task is cancelled (wherever the cancellation lands: the change is
    ///   taken back unless the server's answer already came); a ``PersistenceError`` if
    ///   the confirmed state could not be persisted (it is still applied and emitted).
    @discardableResult
    public func setLike(_ isLiked: Bool, momentID: String, userID: String) async throws -> MomentsDetails {
        try await TraceContext.span("moments.store.set_like", tracer: instruments.tracer) { span in
            span?.setAttribute("moments.user_id", .string(userID))
            span?.setAttribute("moments.moment_id", .string(momentID))
            do {
                return try await performSetLike(isLiked, momentID: momentID, userID: userID)
            } catch where Task.isCancelled {
                throw CancellationError()
            }
        }
    }

    private func performSetLike(_ isLiked: Bool, momentID: String, userID: String) async throws -> MomentsDetails {
        beginActivity()
        defer { endActivity() }
        let key = LikeKey(userID: userID, momentID: momentID)
        likesInFlight[userID, default: 0] += 1
        defer {
            likesInFlight[userID, default: 1] -= 1
            if likesInFlight[userID] == 0 { likesInFlight[userID] = nil }
        }
        var generation: Int?
        if try await loadIfNeeded(userID), state.timeline(of: userID, holds: momentID), let owner = state.timelines[userID] {
            likeCalls += 1
            generation = likeCalls
            let intent = LikeIntent(isLiked: isLiked, liker: Moment.LikedUser(id: userID, avatar: owner.userDetails.avatar), generation: likeCalls)
            // Shown to the liker alone: other users see it once the server confirms it.
            if state.setIntent(intent, on: momentID) {
                publishMoment(momentID, likedBy: userID, phase: .optimistic, audience: .only(userID))
                publishSnapshots(to: [userID])
            }
        }

        let requestID = beginRequest(at: .now)
        defer { endRequest(requestID) }
        let previous = likeChains[key]
        let link = Latch()
        likeChains[key] = link
        let result: Result<(MomentsAnswer, StoreInstant), any Error>
        // The request runs in the caller's task; the previous call's request must end first.
        await previous?.wait()
        if Task.isCancelled {
            result = .failure(CancellationError())
        } else {
            let started = StoreInstant.now
            do {
                result = .success((try await service.likeAnswer(isLiked, momentID: momentID, fromUserID: userID), started))
            } catch {
                result = .failure(error)
            }
        }
        link.open()

        switch result {
        case .success(let (answer, started)):
            let applied: StoreState.Applied
            do {
                (applied, _) = try apply(answer, for: userID, callStarted: started, likeOf: momentID)
            } catch {
                endLike(key, link: link, generation: generation, failed: true)
                throw error
            }
            endLike(key, link: link, generation: generation, failed: false, answerChangedLikersView: applied.likersViewChanged)
            if applied.needsConvergence { scheduleConvergence(userID, since: .now) }
            let ticket = writer.enqueue(applied.batch)
            await invalidateCachedTimelines(holding: momentID, liker: userID)
            try await TraceContext.span("moments.persistence.save", tracer: instruments.tracer) { _ in
                try await writer.wait(for: ticket)
            }
            return state.displayedTimeline(userID) ?? answer.details
        case .failure(let error):
            endLike(key, link: link, generation: generation, failed: true)
            throw error
        }
    }

    /// Ends one like call: its chain link, and its intent unless a later call replaced it
    /// (emitting the confirmed value, or the rollback).
    private func endLike(_ key: LikeKey, link: Latch, generation: Int?, failed: Bool, answerChangedLikersView: Bool = false) {
        if likeChains[key] === link { likeChains[key] = nil }
        if failed, deferredLikers.remove(key) != nil {
            // An answer's difference was waiting on this like, which may or may not have
            // reached the server: only the server can settle it.
            scheduleConvergence(key.userID, since: .now)
        } else if likeChains[key] == nil {
            deferredLikers.remove(key)
        }
        if likeChains[key] == nil, contestedLikers.remove(key) != nil {
            debug("the like of \(key.momentID) by \(key.userID) was contested by another instance; refetching", userID: key.userID)
            scheduleConvergence(state.holders(of: key.momentID).min() ?? key.userID, since: .now)
        }
        let (removed, changed) = generation.map { state.removeIntent(key.userID, from: key.momentID, generation: $0) } ?? (false, false)
        if removed {
            publishMoment(key.momentID, likedBy: key.userID, phase: failed ? .rolledBack : .confirmed, audience: .only(key.userID))
        } else if answerChangedLikersView {
            // A later call's like is still shown on top of what the answer changed.
            publishMoment(key.momentID, likedBy: key.userID, phase: .optimistic, audience: .only(key.userID))
        }
        if changed || answerChangedLikersView { publishSnapshots(to: [key.userID]) }
    }

    private func invalidateCachedTimelines(holding momentID: String, liker: String) async {
        guard service.cachesTimelines else { return }
        var users = state.holders(of: momentID)
        users.insert(liker)
        if let persisted = try? await persistence.userIDs(holding: momentID) { users.formUnion(persisted) }
        await service.invalidateCachedTimelines(of: users.sorted())
    }

    // MARK: - Applying answers

    /// Applies an answer under the ordering rule and emits what changed; returns what to
    /// persist and settle.
    private func apply(
        _ answer: MomentsAnswer, for userID: String, callStarted: StoreInstant, likeOf momentID: String?
    ) throws -> (StoreState.Applied, Evidence) {
        let now = StoreInstant.now
        let evidence: Evidence
        let source: StoreState.Source
        switch answer.origin {
        case .server(let sentAt):
            evidence = Evidence(sent: sentAt.map(StoreInstant.init) ?? callStarted, received: now)
            source = .server(likeOf: momentID)
        case .cache:
            evidence = .ofUnknownAge(receivedAt: now)
            source = .cache
        }
        let likeChains = self.likeChains
        var applied = try state.apply(answer.details, for: userID, evidence: evidence, source: source) { likeChains[$0] != nil }
        debug("applied \(momentID.map { "the answer to a like of \($0)" } ?? "a timeline") from \(answer.origin): "
              + answer.details.moments.map { "\(confirmedLikers($0.id))\(shownIsLiked($0.id, of: userID)) (answer \(($0.likes ?? []).map(\.id).joined(separator: ","))\($0.isLiked == true ? "*" : ""))" }.joined(separator: " ")
              + " [\(evidence)]" + (applied.needsConvergence ? "; refetching" : "")
              + (applied.batch.moments.isEmpty ? "" : "; writing \(applied.batch.moments.keys.sorted())") + (applied.batch.timelines.isEmpty ? "" : " and the timeline"),
              userID: userID)
        if source != .cache, keepsConfirmationIntervals {
            applied.batch.confirmedWithin = state.confirmation(of: applied.batch, answer: evidence)
        }
        deferredLikers.formUnion(applied.deferredLikers)
        contestedLikers.formUnion(applied.contestedLikers)
        publish(applied, for: userID, likedBy: momentID.map { _ in userID }, likedMoment: momentID)
        evictIfNeeded(sparing: userID)
        return (applied, evidence)
    }

    /// The timeline from memory, or loaded from persistence once; whether there is one.
    /// Callers arriving while it loads wait until it is applied.
    private func loadIfNeeded(_ userID: String) async throws -> Bool {
        if state.touch(userID) { return true }
        if let running = loading[userID] { return try await running.value }
        let persistence = self.persistence
        let writer = self.writer
        let task = Task { () async throws -> Bool in
            await writer.idle()  // read what was written, even for a timeline evicted meanwhile
            let loaded = try await persistence.load(userID: userID)
            return try self.applyLoaded(loaded, for: userID)
        }
        loading[userID] = task
        defer { loading[userID] = nil }
        return try await task.value
    }

    private func applyLoaded(_ loaded: MomentsDetails?, for userID: String) throws -> Bool {
        if state.timelines[userID] != nil { return true }
        guard let loaded else { return false }
        let applied = try state.apply(loaded, for: userID, evidence: .ofUnknownAge(receivedAt: .now), source: .persisted) { _ in false }
        publish(applied, for: userID, likedBy: nil, likedMoment: nil)
        evictIfNeeded(sparing: userID)
        return true
    }

    private func loadForSubscriber(_ userID: String) async {
        do {
            _ = try await loadIfNeeded(userID)
        } catch {
            log(.error, "the persisted timeline cannot be read for a new subscriber", userID: userID, error: error)
        }
    }

    // MARK: - Settling

    /// Has the server settle `userID`'s timeline: a refresh sent after `since`.
    func scheduleConvergence(_ userID: String, since: StoreInstant) {
        if let current = convergenceNeeded[userID], current >= since {} else { convergenceNeeded[userID] = since }
        guard convergenceTasks[userID] == nil else { return }
        beginActivity()
        convergenceTasks[userID] = Task {
            await self.converge(userID)
            self.endActivity()
        }
    }

    private func converge(_ userID: String) async {
        defer { convergenceTasks[userID] = nil }
        while let since = convergenceNeeded[userID] {
            if let inFlight = refreshesInFlight[userID] {
                // A refresh sent after `since` (or not sent yet) settles it; an older one does not.
                if inFlight.map({ $0 > since }) ?? true { convergenceNeeded[userID] = nil }
                _ = try? await refresh(userID: userID)
                continue
            }
            convergenceNeeded[userID] = nil
            log(.info, "refetching to settle answers whose order cannot be known", userID: userID, error: nil)
            do {
                _ = try await refresh(userID: userID)
            } catch {
                log(.warning, "the refetch to settle answers failed; the next refresh will", userID: userID, error: error)
                unsettledRefetches += 1
                return
            }
        }
    }

    // MARK: - Emitting

    /// Emits what applying an answer for `userID`'s timeline changed: each moment whose
    /// confirmed value changed, to every holder (but to the liker, while their own like
    /// of it is still in flight: its end emits it to them); each moment whose `isLiked`
    /// changed for `userID` alone, to them; then the timeline's change; then snapshots.
    func publish(_ applied: StoreState.Applied, for userID: String, likedBy: String?, likedMoment: String?) {
        let pendingLike = likedMoment.flatMap { state.intentGeneration(of: userID, on: $0) != nil ? $0 : nil }
        var users: Set<String> = []
        for id in applied.changedMoments {
            let audience: StoreState.Audience = id == pendingLike ? .holdersExcept(userID) : .holders
            if let change = publishMoment(id, likedBy: id == likedMoment ? likedBy : nil, phase: .confirmed, audience: audience) {
                if users.isEmpty { users = change.holders } else { users.formUnion(change.holders) }
            }
        }
        var ownerChanged = applied.timeline != nil
        if !applied.changedEntries.isEmpty {
            // A moment whose confirmed value changed too went out to every holder above.
            let changedNow = Set(applied.changedMoments)
            for id in applied.changedEntries where id != pendingLike {
                ownerChanged = true
                if !changedNow.contains(id) {
                    publishMoment(id, likedBy: id == likedMoment ? likedBy : nil, phase: .confirmed, audience: .only(userID))
                }
            }
        }
        if let timeline = applied.timeline { feed.publish(.timeline(timeline)) }
        if ownerChanged, !userID.isEmpty { users.insert(userID) }
        publishSnapshots(to: users)
    }

    /// Emits the change of `momentID` as `audience` sees it; returns it.
    @discardableResult
    private func publishMoment(_ momentID: String, likedBy: String?, phase: MomentChange.Phase, audience: StoreState.Audience) -> MomentChange? {
        guard let change = state.momentChange(momentID, phase: phase, likedBy: likedBy, audience: audience) else { return nil }
        feed.publish(.moment(change))
        return change
    }

    /// Sends a new snapshot to the subscribers of each of `users`' timelines.
    func publishSnapshots(to users: Set<String>) {
        guard !users.isEmpty, !snapshots.isEmpty else { return }
        for (user, continuations) in snapshots.subscribers(among: users) {
            guard let details = state.displayedTimeline(user) else { continue }
            for continuation in continuations { continuation.yield(details) }
        }
    }

    // MARK: - Bookkeeping

    /// The confirmed value of every moment in memory (likes in flight left out), for
    /// tests that check confirmed state only moves forward.
    package var confirmedMoments: [String: Moment] {
        state.records.mapValues(\.value)
    }

    /// How many events of the change bus the store has applied (for tests that must
    /// know a delivered event has been handled).
    package private(set) var sharedEventsApplied = 0
    private var sharedEventWaiters: [(count: Int, continuation: CheckedContinuation<Void, Never>)] = []

    private func countSharedEvent() {
        sharedEventsApplied += 1
        guard !sharedEventWaiters.isEmpty else { return }
        let ready = sharedEventWaiters.filter { $0.count <= sharedEventsApplied }
        sharedEventWaiters.removeAll { $0.count <= sharedEventsApplied }
        for waiter in ready { waiter.continuation.resume() }
    }

    /// Waits until the store has applied `count` events of the change bus (for tests
    /// that deliver events one at a time).
    package func waitUntilSharedEventsApplied(_ count: Int) async {
        guard sharedEventsApplied < count else { return }
        await withCheckedContinuation { sharedEventWaiters.append((count, $0)) }
    }

    /// How many refetches to settle answers of unknown order failed, leaving the timeline
    /// to the next refresh (for simulations that must know whether one is needed).
    package private(set) var unsettledRefetches = 0

    /// How many `setLike` calls of `userID` have begun and not returned (for tests).
    package func likeCallsInFlight(for userID: String) -> Int { likesInFlight[userID] ?? 0 }

    /// Whether nothing is in flight now (no refresh, like, refetch or write), without
    /// waiting (for tests that poll).
    package var isIdle: Bool { activity == 0 && !writer.isBusy }

    /// What the store has in flight, for tests and diagnostics.
    package var diagnostics: String {
        "activity \(activity), refreshes \(refreshesInFlight.sorted { $0.key < $1.key }.map { "\($0.key)\($0.value == nil ? "(reading)" : "(sent)")" }), likes \(likeChains.keys.map { "\($0.userID)/\($0.momentID)" }.sorted()), "
            + "convergence \(convergenceNeeded.keys.sorted()) tasks \(convergenceTasks.keys.sorted()), loading \(loading.keys.sorted()), "
            + "writer busy \(writer.isBusy), flights \(refreshes.count), retired records \(state.retiredCount)"
    }

    /// Evicts least recently used timelines, sparing `current` (the one just used) and
    /// every timeline with subscribers, likes or refreshes in flight.
    private func evictIfNeeded(sparing current: String) {
        let evicted = state.evictIfNeeded { userID in
            userID == current || snapshots.hasSubscribers(userID) || likesInFlight[userID] != nil || refreshesInFlight[userID] != nil
        }
        if instruments.isMeasuring {
            instruments.evicted(evicted.count)
            instruments.timelinesInMemory(state.timelines.count)
        }
        if !evicted.isEmpty { state.sweepRetired(oldestRequest: requestStarts.values.min()) }
    }

    private func beginActivity() {
        activity += 1
    }

    private func beginRequest(at start: StoreInstant) -> Int {
        requestCount += 1
        requestStarts[requestCount] = start
        return requestCount
    }

    private func endRequest(_ id: Int) {
        requestStarts[id] = nil
        if state.retiredCount > 0 { state.sweepRetired(oldestRequest: requestStarts.values.min()) }
    }

    private func endActivity() {
        activity -= 1
        guard activity == 0 else { return }
        let waiters = idleWaiters
        idleWaiters = []
        for waiter in waiters { waiter.resume() }
    }

    /// A debug record of an ordering decision, built only if a log handler is set and
    /// ``Configuration-swift.struct/logLevel`` lets debug records through.
    func debug(_ message: @autoclosure () -> String, userID: String) {
        guard configuration.logLevel <= .debug, let handler = configuration.logHandler else { return }
        handler(LogRecord(level: .debug, message: message(), metadata: ["userID": userID]))
    }

    /// `*` if `userID`'s timeline holds `momentID` as liked, for debug records.
    private func shownIsLiked(_ momentID: String, of userID: String) -> String {
        state.displayedTimeline(userID)?.moment(withID: momentID)?.isLiked == true ? "*" : ""
    }

    /// `momentID`'s confirmed likers, for debug records.
    func confirmedLikers(_ momentID: String) -> String {
        guard let likes = state.records[momentID]?.value.likes else { return "\(momentID)[?]" }
        return "\(momentID)[\(likes.map(\.id).joined(separator: ","))]"
    }

    func log(_ level: LogRecord.Level, _ message: String, userID: String, error: (any Error)?) {
        guard level >= configuration.logLevel, let handler = configuration.logHandler else { return }
        var metadata = ["userID": userID]
        if let error { metadata["error"] = String(describing: error) }
        handler(LogRecord(level: level, message: message, metadata: metadata))
    }
}
