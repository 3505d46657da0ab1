public import Foundation
public import MomentsNetworking
public import MomentsGraphQL
public import MomentsHTTP
public import Moments

/// The mutation `updateMomentLike`: `userID` likes or unlikes a moment.
///
/// The BFF treats it as idempotent (liking a liked moment changes nothing), does not
/// fail for an unknown moment, and answers with `userID`'s whole timeline.
public struct UpdateMomentLike: GraphQLOperation {
    /// The liker's timeline after the mutation.
    public typealias Response = MomentsDetails

    /// The mutation's variables.
    public struct Variables: Encodable, Sendable, Hashable {
        /// The moment to like or unlike.
        public var momentID: String
        /// The user who likes or unlikes it.
        public var userID: String
        /// `true` to like, `false` to unlike.
        public var isLiked: Bool
    }

    /// The `data` of the answer.
    public struct ResponseData: Decodable, Sendable {
        /// The liker's timeline after the mutation.
        public var updateMomentLike: MomentsDetails
    }

    /// The operation's name in the document.
    public static let operationName = "updateMomentLike"
    /// It changes the server's state: never cached, never coalesced.
    public static let isMutation = true
    /// The GraphQL document sent.
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

    /// The values sent with the document.
    public var variables: Variables

    /// The BFF makes this mutation idempotent (liking twice changes nothing), so it may
    /// be retried; it is never cached.
    public var options: RequestOptions { RequestOptions(allowsRetry: true) }

    /// `userID` likes (`isLiked`) or unlikes moment `momentID`.
    public init(isLiked: Bool, momentID: String, userID: String) {
        variables = Variables(momentID: momentID, userID: userID, isLiked: isLiked)
    }

    /// Decodes a clean answer with a fast reader of its own, and anything else (errors,
    /// surprises) with `decoder`, whose typed errors are the ones reported.
    public func decodeResponse(_ response: HTTPResponse, decoder: JSONDecoder) throws -> MomentsDetails {
        try decodeTimeline(response, decoder: decoder, field: "updateMomentLike")
    }

    /// The variables, written without an encoder (this mutation is sent on every like).
    public var encodedVariables: Data? {
        var object = JSONObjectWriter()
        object.add("momentID", variables.momentID)
        object.add("userID", variables.userID)
        object.add("isLiked", variables.isLiked)
        return object.finished()
    }

    /// Refuses empty ids before anything is sent.
    public func validate() throws {
        guard !variables.momentID.isEmpty else { throw ValidationError("momentID is empty") }
        guard !variables.userID.isEmpty else { throw ValidationError("userID is empty") }
    }

    /// The timeline inside the answer's `data`.
    public func extract(_ data: ResponseData) -> MomentsDetails {
        data.updateMomentLike
    }
}
