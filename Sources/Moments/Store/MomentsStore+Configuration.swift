public import MomentsObservability
public import MomentsHTTP

extension MomentsStore {
    /// How a ``MomentsStore`` keeps timelines and delivers changes.
    public struct Configuration: Sendable {
        // MARK: Likes

        /// Whether timelines are fetched with likes (`isLiked` and `likes`: the BFF's
        /// `withLikes` feature toggle). With `false`, refreshes ask the service for
        /// timelines without them (a smaller answer) and
        /// ``MomentsStore/setLike(_:momentID:userID:)`` throws
        /// ``MomentsStoreError/Code-swift.struct/likesNotFetched`` without sending
        /// anything, since a store that does not follow likes cannot show a liker the
        /// state they set. A service that sends likes anyway, or another instance that
        /// follows them, still has its likes kept as the server's. The default is `true`.
        public var withLikes: Bool = true

        // MARK: Memory

        /// How many users' timelines are kept in memory; the rest are reloaded from
        /// persistence when asked for. Timelines with live subscribers, likes or
        /// refreshes in flight are always kept. The default is 1,000.
        public var maximumTimelinesInMemory: Int = 1_000

        // MARK: Changes

        /// The most changes one ``MomentsStore/changes()`` consumer may have waiting;
        /// a consumer further behind loses its oldest and receives a gap marker
        /// instead. The default is 1,024.
        public var changeBufferSize: Int = 1_024

        /// How many of the latest changes the store keeps for
        /// ``MomentsStore/changes(after:)``. The default is 4,096.
        public var retainedChanges: Int = 4_096

        // MARK: Sharing

        /// Where changes other instances committed to shared storage arrive, such as
        /// the `PostgresPersistence` this store writes to. The store applies them under
        /// its ordering rule and emits them like its own; after an interruption it emits
        /// ``MomentsChange/Kind-swift.enum/sharedChangesInterrupted`` and resynchronises
        /// the moments and timelines it holds. The default is `nil`: no sharing.
        public var changeBus: (any MomentsChangeBus)?

        /// How far the wall clocks of instances sharing a ``changeBus`` may disagree
        /// (give every instance the same value). An instance widens each interval it
        /// writes by half of it and each interval it reads by the other half, so both
        /// an instance and the storage comparing two instances' values take a value
        /// whose order is in doubt for what it is: refetched from the service rather
        /// than guessed. The default is 100 ms.
        public var clockSkewTolerance: Duration = .milliseconds(100)

        // MARK: Time

        /// Where the store reads the time: when each request left and each answer came
        /// (the ages its ordering rule compares), the ages of timelines, the spreading of
        /// refreshes, and the wall-clock intervals shared with other instances. Give a
        /// `ManualClock` (product `MomentsTesting`) to move time in tests. The default is
        /// `SystemClock`.
        public var clock: any MomentsClock = SystemClock()

        // MARK: Observing

        /// Receives what the store does that a test or simulation must know has happened
        /// (see ``StoreEvent``); the store itself keeps no count of them. The default is `nil`.
        package var observer: (@Sendable (StoreEvent) -> Void)?

        /// Receives what the store does that no caller is told: failures without a
        /// caller (a persisted timeline that cannot be read when a stream starts, a
        /// background refetch that fails) and the refetches it makes to settle answers
        /// whose order it cannot know. The default is `nil`.
        public var logHandler: LogHandler?

        /// The least important records ``logHandler`` receives. At `.debug`, the store
        /// also tells each ordering decision (what an answer or another instance's value
        /// did, refetches, contests), which costs a line per answer. The default is `.info`.
        public var logLevel: LogRecord.Level = .info

        /// Receives a span for each ``MomentsStore/refresh(userID:source:)`` and
        /// ``MomentsStore/setLike(_:momentID:userID:)`` made under a `TraceContext`
        /// (`moments.store.refresh`, `moments.store.set_like`), and for each persistence
        /// write (`moments.persistence.save`); the service's and client's spans are their
        /// children. The default is `nil`: the store starts no spans, and the service's
        /// spans are children of the caller's context.
        public var tracer: (any MomentsTracer)?

        /// Makes the store's figures: `moments.store.timelines` (in memory),
        /// `moments.store.evictions`, `moments.store.subscribers`,
        /// `moments.store.changes.lag.max` (the slowest `changes()` consumer's backlog),
        /// `moments.store.changes.gaps`, `moments.store.persistence.write.duration` and
        /// `moments.store.persistence.write.failures`, `moments.store.shared.lag` (how
        /// long after another instance's confirmation its change was applied here). The
        /// default is `nil`.
        public var metrics: (any MomentsMetricsFactory)?

        /// Creates a configuration with every default.
        public init() {}

        /// Creates a configuration, then lets `configure` adjust it.
        public init(configure: (inout Configuration) -> Void) {
            configure(&self)
        }
    }
}
