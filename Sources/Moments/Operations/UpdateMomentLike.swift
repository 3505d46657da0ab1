public import Foundation
public import MomentsNetworking

/// The mutation `updateMomentLike`: `userID` likes or unlikes a moment.
///
/// The BFF treats it as idempotent (liking a liked moment changes nothing), does not
/// fail for an unknown moment, and answers with `userID`'s whole timeline.
public struct UpdateMomentLike: GraphQLOperation {
    public typealias Response = MomentsDetails

    public struct Variables: Encodable, Sendable, Hashable {
        public var momentID: String
        public var userID: String
        public var isLiked: Bool
    }

    public struct ResponseData: Decodable, Sendable {
        public var updateMomentLike: MomentsDetails
    }

    public static let operationName = "updateMomentLike"
    public static let isMutation = true
    public static let document = """
        mutation updateMomentLike($momentID: ID!, $userID: ID!, $isLiked: Boolean!) {
          updateMomentLike(momentID: $momentID, userID: $userID, isLiked: $isLiked) {
            \(MomentsSelection.userDetails)
            moments {
              \(MomentsSelection.momentFields)
              isLiked
              \(MomentsSelection.likes)
            }
          }
        }
        """

    public var variables: Variables

    /// The BFF makes this mutation idempotent (liking twice changes nothing), so it may
    /// be retried.
    public var allowsRetry: Bool { true }

    public init(isLiked: Bool, momentID: String, userID: String) {
        variables = Variables(momentID: momentID, userID: userID, isLiked: isLiked)
    }

    /// Decodes a clean answer with a fast reader of its own, and anything else (errors,
    /// surprises) with `decoder`, whose typed errors are the ones reported.
    public func decodeResponse(_ response: HTTPResponse, decoder: JSONDecoder) throws -> MomentsDetails {
        try decodeTimeline(response, decoder: decoder, field: "updateMomentLike")
    }

    public func validate() throws {
        guard !variables.momentID.isEmpty else { throw ValidationError("momentID is empty") }
        guard !variables.userID.isEmpty else { throw ValidationError("userID is empty") }
    }

    public func extract(_ data: ResponseData) -> MomentsDetails {
        data.updateMomentLike
    }
}
