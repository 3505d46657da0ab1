/// What code built on the SDK asks of a store of timelines: fetch a user's timeline,
/// like or unlike a moment, read what is held, and watch it change.
///
/// ``MomentsStore`` is the implementation. Write your own types against
/// `any MomentsRepository` and a test of them can give a fake in its place (one that
/// returns a fixed timeline, or fails on cue) without a service, persistence or clock.
///
/// An implementation keeps ``MomentsStore``'s promises where its callers depend on
/// them: `setLike` returns the timeline with the like as the server confirmed it,
/// `updates(for:)` starts with the newest timeline (if one exists) and ends when its
/// consumer stops, and `changes()` reports every change from the call on.
///
/// For example:
/// ```swift
/// struct LikeButton {
///     let repository: any MomentsRepository
///     func toggle(_ moment: Moment, for userID: String) async throws -> Bool {
///         let timeline = try await repository.setLike(moment.isLiked != true, momentID: moment.id, userID: userID)
///         return timeline.moment(withID: moment.id)?.isLiked == true
///     }
/// }
/// ```
public protocol MomentsRepository: Sendable {
    /// Fetches `userID`'s timeline from `source` (see ``MomentsStore/refresh(userID:source:)``).
    @discardableResult
    func refresh(userID: String, source: TimelineSource) async throws -> MomentsDetails

    /// Has `userID` like or unlike a moment of their timeline (see
    /// ``MomentsStore/setLike(_:momentID:userID:)``).
    @discardableResult
    func setLike(_ isLiked: Bool, momentID: String, userID: String) async throws -> MomentsDetails

    /// `userID`'s timeline as held, or `nil` (see ``MomentsStore/details(for:)``).
    func details(for userID: String) async throws -> MomentsDetails?

    /// `userID`'s timeline now and at every change (see ``MomentsStore/updates(for:)``).
    func updates(for userID: String) async -> AsyncStream<MomentsDetails>

    /// Every change, across users, from now on (see ``MomentsStore/changes()``).
    func changes() -> AsyncStream<MomentsChange>
}

extension MomentsRepository {
    /// Fetches `userID`'s timeline from the server (``TimelineSource/server``).
    @discardableResult
    public func refresh(userID: String) async throws -> MomentsDetails {
        try await refresh(userID: userID, source: .server)
    }
}

extension MomentsStore: MomentsRepository {}
