/// What the SDK needs from a Moments backend. ``GraphQLMomentsService`` speaks to the
/// BFF; a REST or gRPC backend, or a test double, can take its place.
public protocol MomentsService: Sendable {
    /// Fetches `userID`'s timeline, with likes.
    func getMoments(userID: String) async throws -> MomentsDetails

    /// Has `userID` like (`true`) or unlike (`false`) a moment; returns `userID`'s
    /// timeline as it is after the change.
    func updateLike(_ isLiked: Bool, momentID: String, fromUserID userID: String) async throws -> MomentsDetails
}
