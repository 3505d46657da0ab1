/// What the SDK needs from a Moments backend. `GraphQLMomentsService` (module
/// `MomentsBFF`) speaks to the BFF; a REST or gRPC backend, or a test double, can take
/// its place.
///
/// Only ``getMoments(userID:)`` and ``updateLike(_:momentID:fromUserID:)`` are required.
/// A service with a cache also implements ``refreshAnswers(userID:source:withLikes:receive:)``,
/// ``likeAnswer(_:momentID:fromUserID:)`` and ``invalidateCachedTimelines(of:)``, so that
/// ``MomentsStore`` knows how old each answer may be.
public protocol MomentsService: Sendable {
    /// Fetches `userID`'s timeline, with likes.
    func getMoments(userID: String) async throws -> MomentsDetails

    /// Has `userID` like (`true`) or unlike (`false`) a moment; returns `userID`'s
    /// timeline as it is after the change.
    func updateLike(_ isLiked: Bool, momentID: String, fromUserID userID: String) async throws -> MomentsDetails

    /// Fetches `userID`'s timeline from `source` (any source but
    /// ``TimelineSource/cacheThenServer``, which may answer twice), and says where the
    /// answer came from: the server (and when its exchange began), or a cache. With
    /// `withLikes` `false` the caller does not need `isLiked` and `likes`: a service may
    /// leave them out (`nil`), or send them anyway.
    ///
    /// The default fetches with ``getMoments(userID:)``, ignoring `source` (no cache) and
    /// `withLikes`, and reports the answer as the server's.
    nonisolated(nonsending) func refreshAnswer(userID: String, source: TimelineSource, withLikes: Bool) async throws -> MomentsAnswer

    /// Fetches `userID`'s timeline from `source`, handing each answer to `receive` as it
    /// arrives: at most a cached answer and then the server's (for
    /// ``TimelineSource/cacheThenServer``, both). `withLikes` as for
    /// ``refreshAnswer(userID:source:withLikes:)``.
    ///
    /// The default hands on ``refreshAnswer(userID:source:withLikes:)``'s one answer.
    nonisolated(nonsending) func refreshAnswers(
        userID: String, source: TimelineSource, withLikes: Bool, receive: @Sendable (MomentsAnswer) async throws -> Void
    ) async throws

    /// Has `userID` like or unlike a moment, and says where the answer came from.
    ///
    /// The default calls ``updateLike(_:momentID:fromUserID:)``.
    nonisolated(nonsending) func likeAnswer(_ isLiked: Bool, momentID: String, fromUserID userID: String) async throws -> MomentsAnswer

    /// Drops every cached answer holding the timelines of `userIDs`, after a change the
    /// store confirmed, so that no source can serve the state before it.
    ///
    /// The default does nothing.
    func invalidateCachedTimelines(of userIDs: [String]) async

    /// Whether answers may come from a cache, so that the store must invalidate cached
    /// timelines after a confirmed like. The default is `false`.
    var cachesTimelines: Bool { get }

    /// Whether a like or unlike that failed with `error` may have been applied by the
    /// server all the same (its answer lost on the way back): ``MomentsStore`` then asks
    /// the server what happened before it shows the like's outcome. Say `false` only for
    /// failures the service knows came before anything was sent.
    ///
    /// The default is `true` for every error but `CancellationError`.
    func likeMayHaveReachedServer(failingWith error: any Error) -> Bool
}

extension MomentsService {
    /// The default: ``getMoments(userID:)`` (a service without a cache ignores the
    /// source), as an answer of the server.
    public nonisolated(nonsending) func refreshAnswer(userID: String, source: TimelineSource, withLikes: Bool) async throws -> MomentsAnswer {
        MomentsAnswer(details: try await getMoments(userID: userID), origin: .server(sentAt: nil))
    }

    /// The default: ``refreshAnswer(userID:source:withLikes:)``, once.
    public nonisolated(nonsending) func refreshAnswers(
        userID: String, source: TimelineSource, withLikes: Bool, receive: @Sendable (MomentsAnswer) async throws -> Void
    ) async throws {
        try await receive(refreshAnswer(userID: userID, source: source, withLikes: withLikes))
    }

    /// The default: ``updateLike(_:momentID:fromUserID:)``, as an answer of the server.
    public nonisolated(nonsending) func likeAnswer(_ isLiked: Bool, momentID: String, fromUserID userID: String) async throws -> MomentsAnswer {
        MomentsAnswer(details: try await updateLike(isLiked, momentID: momentID, fromUserID: userID), origin: .server(sentAt: nil))
    }

    /// The default does nothing: no cache.
    public func invalidateCachedTimelines(of userIDs: [String]) async {}

    /// The default is `false`.
    public var cachesTimelines: Bool { false }

    /// The default: `true` for every error but `CancellationError`.
    public func likeMayHaveReachedServer(failingWith error: any Error) -> Bool {
        !(error is CancellationError)
    }
}

/// A timeline a ``MomentsService`` produced, and where it came from, which tells
/// ``MomentsStore`` how old it may be.
public struct MomentsAnswer: Sendable, Hashable {
    /// Where an answer came from.
    public enum Origin: Sendable, Hashable {
        /// The server computed it, no earlier than `sentAt`: when the exchange that
        /// produced it began (for an exchange shared by identical requests, when the
        /// first of them began it). `nil` means no earlier than the call began.
        case server(sentAt: ContinuousClock.Instant?)
        /// A cache served it: the server computed it at some unknown time in the past.
        case cache
    }

    /// The timeline.
    public var details: MomentsDetails
    /// Where it came from.
    public var origin: Origin

    /// An answer of `details`, from `origin`.
    public init(details: MomentsDetails, origin: Origin) {
        self.details = details
        self.origin = origin
    }
}
