public import MomentsNetworking

/// The single source of truth for many users' timelines.
///
/// It serves persisted state first (offline-first), refreshes from a ``MomentsService``,
/// applies likes optimistically, and streams every change of a user's timeline to that
/// user's subscribers.
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
/// What subscribers see is the last timeline confirmed by the server (or persisted),
/// with the likes still in flight applied on top. Only confirmed state is persisted.
/// Errors are thrown to the caller; the stream keeps the last good state.
public actor MomentsStore {
    /// How this store keeps timelines.
    public nonisolated let configuration: Configuration
    private let service: any MomentsService
    private let persistence: any MomentsPersistence
    private let subscribers = SubscriberRegistry<MomentsDetails>()

    /// Confirmed timelines (server answers or persisted state).
    private var confirmed: TimelineCache
    /// Likes in flight: user → moment → the latest intended `isLiked`.
    private var intents: [String: [String: LikeIntent]] = [:]
    /// The tail of each (user, moment) chain of like mutations, so they reach the server in call order.
    private var likeChains: [LikeKey: Task<Void, Never>] = [:]
    private var loading: [String: Task<MomentsDetails?, any Error>] = [:]
    private var refreshing: [String: Task<MomentsDetails, any Error>] = [:]
    private var ticks: UInt64 = 0

    /// Creates a store.
    /// - Parameters:
    ///   - service: Where timelines come from and likes go to.
    ///   - persistence: Where confirmed timelines are kept across restarts.
    ///   - configuration: How many timelines stay in memory, where failures are logged.
    public init(service: any MomentsService, persistence: any MomentsPersistence, configuration: Configuration = Configuration()) {
        self.service = service
        self.persistence = persistence
        self.configuration = configuration
        self.confirmed = TimelineCache(capacity: configuration.maximumTimelinesInMemory)
    }

    deinit {
        subscribers.finishAll()
    }

    // MARK: - Reading

    /// A stream of `userID`'s timeline: the newest value at once if there is one (from
    /// memory or persistence), then every change, in order.
    ///
    /// A slow consumer receives the newest timeline, not a backlog. The stream ends, and
    /// its resources are released, when the consuming task is cancelled or the stream is
    /// dropped. Nothing is emitted before a first timeline exists.
    public func updates(for userID: String) -> AsyncStream<MomentsDetails> {
        let (stream, continuation) = subscribers.subscribe(userID)
        if let current = displayed(userID) {
            continuation.yield(current)
        } else {
            Task { await self.loadForSubscriber(userID) }
        }
        return stream
    }

    /// `userID`'s timeline as subscribers see it, from memory or persistence; `nil` if the
    /// store has none.
    ///
    /// - Throws: ``PersistenceError`` if the persisted timeline cannot be read.
    public func details(for userID: String) async throws -> MomentsDetails? {
        _ = try await confirmedTimeline(userID)
        return displayed(userID)
    }

    /// The number of live subscribers of `userID`'s stream.
    public func subscriberCount(for userID: String) -> Int {
        subscribers.count(for: userID)
    }

    /// The number of timelines held in memory.
    public var timelinesInMemory: Int { confirmed.count }

    // MARK: - Refreshing

    /// Fetches `userID`'s timeline from the service, persists it, and emits it.
    ///
    /// Persisted state is emitted first, if none was in memory. Concurrent refreshes of
    /// one user share a single fetch.
    ///
    /// - Returns: The timeline as subscribers now see it.
    /// - Throws: The service's error (an ``HTTPClientError`` for ``GraphQLMomentsService``);
    ///   the stream and the persisted state then keep the last good timeline. A
    ///   ``PersistenceError`` if the answer could not be persisted (it is still emitted).
    ///
    /// - Parameter cachePolicy: Where the service may take the answer from (for
    ///   ``GraphQLMomentsService``, its client's response cache). The default is
    ///   `.remote`: always the network.
    @discardableResult
    public func refresh(userID: String, cachePolicy: CachePolicy = .remote) async throws -> MomentsDetails {
        if let running = refreshing[userID] { return try await running.value }
        // A task of its own, so one caller's cancellation does not fail the callers sharing it.
        let task = Task { try await self.performRefresh(userID, cachePolicy: cachePolicy) }
        refreshing[userID] = task
        defer { refreshing[userID] = nil }
        return try await task.value
    }

    private func performRefresh(_ userID: String, cachePolicy: CachePolicy) async throws -> MomentsDetails {
        do {
            _ = try await confirmedTimeline(userID)
        } catch {
            // A damaged persisted timeline is replaced by the server's answer below.
            log(.warning, "the persisted timeline cannot be read; refreshing from the service", userID: userID, error: error)
        }
        let tick = nextTick()
        let fetched = try await service.getMoments(userID: userID, cachePolicy: cachePolicy)
        try await applyConfirmed(fetched, for: userID, tick: tick, persist: .whole)
        return displayed(userID) ?? fetched
    }

    // MARK: - Liking

    /// Has `userID` like or unlike a moment of their timeline, optimistically.
    ///
    /// The change is emitted at once (`isLiked` set, the user added to or removed from
    /// `likes`); the mutation is sent; the server's answer is persisted and emitted, and
    /// the moment's likes are updated in every other timeline in memory that holds it. On
    /// failure the change is rolled back, emitted, and the error thrown. Concurrent calls
    /// for one moment reach the server in call order; the last call's state wins.
    ///
    /// - Returns: The timeline as subscribers see it after the answer.
    /// - Throws: The service's error, after rolling back; a ``PersistenceError`` if the
    ///   confirmed state could not be persisted (it is still emitted).
    @discardableResult
    public func setLike(_ isLiked: Bool, momentID: String, userID: String) async throws -> MomentsDetails {
        let key = LikeKey(userID: userID, momentID: momentID)
        if let timeline = try await confirmedTimeline(userID), timeline.moment(withID: momentID) != nil {
            let generation = (intents[userID]?[momentID]?.generation ?? 0) + 1
            intents[userID, default: [:]][momentID] = LikeIntent(isLiked: isLiked, generation: generation)
            publish(userID)
            defer { finishIntent(key, generation: generation) }
            return try await sendLike(isLiked, key: key)
        }
        return try await sendLike(isLiked, key: key)
    }

    private func sendLike(_ isLiked: Bool, key: LikeKey) async throws -> MomentsDetails {
        let previous = likeChains[key]
        let service = self.service
        let request = Task { () async throws -> (MomentsDetails, UInt64) in
            _ = await previous?.value
            let tick = self.nextTick()
            try Task.checkCancellation()
            return (try await service.updateLike(isLiked, momentID: key.momentID, fromUserID: key.userID), tick)
        }
        let tail = Task { _ = await request.result }
        likeChains[key] = tail
        defer { if likeChains[key] == tail { likeChains[key] = nil } }

        let result = await withTaskCancellationHandler { await request.result } onCancel: { request.cancel() }
        switch result {
        case .success(let (answer, tick)):
            try await applyLikeAnswer(answer, key: key, tick: tick)
            return displayed(key.userID) ?? answer
        case .failure(let error):
            throw error
        }
    }

    /// Ends the intent of call `generation`, unless a later call replaced it, and emits
    /// the result: the confirmed state on success, a rollback on failure.
    private func finishIntent(_ key: LikeKey, generation: Int) {
        guard intents[key.userID]?[key.momentID]?.generation == generation else { return }
        let before = displayed(key.userID)
        intents[key.userID]?[key.momentID] = nil
        if intents[key.userID]?.isEmpty == true { intents[key.userID] = nil }
        // After a confirmation nothing changes (already emitted); after a failure this is the rollback.
        if displayed(key.userID) != before { publish(key.userID) }
    }

    private func applyLikeAnswer(_ answer: MomentsDetails, key: LikeKey, tick: UInt64) async throws {
        let before = confirmed.peek(key.userID)
        let oneMoment = before.map { answer.differsOnlyIn(momentID: key.momentID, from: $0) } ?? false
        var failures: [any Error] = []
        do {
            try await applyConfirmed(answer, for: key.userID, tick: tick, persist: oneMoment ? .moment(key.momentID) : .whole)
        } catch {
            failures.append(error)
        }
        // The same moment in other users' timelines gets the confirmed likes.
        if let moment = answer.moment(withID: key.momentID) {
            for other in confirmed.users(holding: key.momentID) where other != key.userID {
                guard var timeline = confirmed.peek(other), var theirs = timeline.moment(withID: key.momentID),
                      theirs.likes != nil, theirs.likes != moment.likes else { continue }
                theirs.likes = moment.likes
                _ = timeline.replace(theirs)
                confirmed.set(timeline, for: other, tick: confirmed.tick(of: other), isPinned: isPinned)
                publish(other)
                do {
                    try await persistence.saveMoment(theirs, for: other)
                } catch {
                    failures.append(error)
                }
            }
        }
        if let first = failures.first { throw first }
    }

    // MARK: - State

    private enum PersistScope {
        case whole
        case moment(String)
    }

    /// Applies a server answer requested at `tick`, unless an answer requested later was
    /// already applied; persists it, then emits. A persistence failure is thrown after
    /// the answer is applied and emitted: the server's state is the truth.
    private func applyConfirmed(_ details: MomentsDetails, for userID: String, tick: UInt64, persist scope: PersistScope) async throws {
        guard tick > confirmed.tick(of: userID) else { return }
        var persistenceError: (any Error)?
        do {
            switch scope {
            case .whole:
                try await persistence.save(details, for: userID)
            case .moment(let momentID):
                if let moment = details.moment(withID: momentID), try await persistence.saveMoment(moment, for: userID) {
                    break
                }
                try await persistence.save(details, for: userID)
            }
        } catch {
            persistenceError = error
        }
        // Something newer may have landed while persisting.
        guard tick > confirmed.tick(of: userID) else { return }
        confirmed.set(details, for: userID, tick: tick, isPinned: isPinned)
        publish(userID)
        if let persistenceError { throw persistenceError }
    }

    /// The confirmed timeline, loading it from persistence once if it is not in memory.
    private func confirmedTimeline(_ userID: String) async throws -> MomentsDetails? {
        if let cached = confirmed.get(userID) { return cached }
        if let running = loading[userID] { return try await running.value }
        let persistence = self.persistence
        let task = Task { try await persistence.load(userID: userID) }
        loading[userID] = task
        defer { loading[userID] = nil }
        let loaded = try await task.value
        if let newer = confirmed.get(userID) { return newer }
        guard let loaded else { return nil }
        confirmed.set(loaded, for: userID, tick: 0, isPinned: isPinned)
        publish(userID)
        return loaded
    }

    private func loadForSubscriber(_ userID: String) async {
        do {
            _ = try await confirmedTimeline(userID)
        } catch {
            log(.error, "the persisted timeline cannot be read for a new subscriber", userID: userID, error: error)
        }
    }

    /// The confirmed timeline with the likes in flight applied.
    private func displayed(_ userID: String) -> MomentsDetails? {
        guard var details = confirmed.peek(userID) else { return nil }
        guard let pending = intents[userID] else { return details }
        for (momentID, intent) in pending {
            if let moment = details.moment(withID: momentID) {
                _ = details.replace(moment.liked(intent.isLiked, by: details.userDetails))
            }
        }
        return details
    }

    private func publish(_ userID: String) {
        guard subscribers.hasSubscribers(userID), let details = displayed(userID) else { return }
        subscribers.yield(details, to: userID)
    }

    private func isPinned(_ userID: String) -> Bool {
        intents[userID] != nil || subscribers.hasSubscribers(userID)
    }

    private func nextTick() -> UInt64 {
        ticks += 1
        return ticks
    }

    private func log(_ level: LogRecord.Level, _ message: String, userID: String, error: any Error) {
        configuration.logHandler?(LogRecord(level: level, message: message, metadata: ["userID": userID, "error": String(describing: error)]))
    }
}

struct LikeKey: Hashable, Sendable {
    let userID: String
    let momentID: String
}

struct LikeIntent: Sendable {
    let isLiked: Bool
    let generation: Int
}
