public import MomentsNetworking

/// What the SDK needs from a Moments backend. ``GraphQLMomentsService`` speaks to the
/// BFF; a REST or gRPC backend, or a test double, can take its place.
public protocol MomentsService: Sendable {
    /// Fetches `userID`'s timeline, with likes.
    func getMoments(userID: String) async throws -> MomentsDetails

    /// Fetches `userID`'s timeline under a cache policy. Services without a cache
    /// ignore the policy.
    func getMoments(userID: String, cachePolicy: CachePolicy) async throws -> MomentsDetails

    /// Has `userID` like (`true`) or unlike (`false`) a moment; returns `userID`'s
    /// timeline as it is after the change.
    func updateLike(_ isLiked: Bool, momentID: String, fromUserID userID: String) async throws -> MomentsDetails
}

extension MomentsService {
    public func getMoments(userID: String, cachePolicy: CachePolicy) async throws -> MomentsDetails {
        try await getMoments(userID: userID)
    }
}
