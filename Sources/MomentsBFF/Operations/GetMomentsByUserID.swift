public import Foundation
public import MomentsNetworking
public import MomentsGraphQL
public import MomentsHTTP
public import Moments

/// The query `getMomentsDetailsByUserID`: a user's timeline.
///
/// With `withLikes` false, `isLiked` and `likes` are left out of the answer
/// (`@include(if: $withLikes)`), and the moments' fields of the same names are `nil`.
public struct GetMomentsByUserID: GraphQLOperation {
    /// The user's timeline.
    public typealias Response = MomentsDetails

    /// The query's variables.
    public struct Variables: Encodable, Sendable, Hashable {
        /// The user whose timeline to fetch.
        public var userID: String
        /// Whether to ask for every moment's likes.
        public var withLikes: Bool
    }

    /// The `data` of the answer.
    public struct ResponseData: Decodable, Sendable {
        /// The user's timeline.
        public var getMomentsDetailsByUserID: MomentsDetails
    }

    /// The operation's name in the document.
    public static let operationName = "getMomentsDetailsByUserID"
    /// The GraphQL document sent.
    public static let document = """
        query getMomentsDetailsByUserID($userID: ID!, $withLikes: Boolean!) {
          getMomentsDetailsByUserID(userID: $userID) {
            \(MomentsSelection.userDetails)
            moments {
              \(MomentsSelection.momentFields)
              isLiked @include(if: $withLikes)
              likes @include(if: $withLikes) { id avatar }
            }
          }
        }
        """

    /// The values sent with the document.
    public var variables: Variables
    /// Where the answer may come from; `nil` uses the client's policy.
    public var cachePolicy: CachePolicy?
    /// Whether a slow attempt is sent a second time (see `HedgingPolicy`). The default
    /// is `true`: a read of a timeline is safe to repeat.
    public var hedges: Bool = true

    /// A read: retried, hedged unless ``hedges`` is `false`, cacheable by its body,
    /// under ``cachePolicy``. Made on each read, so that the query itself stays small.
    public var options: RequestOptions {
        RequestOptions(allowsRetry: true, hedges: hedges, isCacheable: true, cachePolicy: cachePolicy)
    }

    /// - Parameters:
    ///   - userID: Whose timeline to fetch.
    ///   - withLikes: Whether to fetch `isLiked` and `likes`. The default is `true`.
    ///   - cachePolicy: Where the answer may come from; `nil` uses the client's.
    public init(userID: String, withLikes: Bool = true, cachePolicy: CachePolicy? = nil) {
        variables = Variables(userID: userID, withLikes: withLikes)
        self.cachePolicy = cachePolicy
    }

    /// Decodes a clean answer with a fast reader of its own, and anything else (errors,
    /// surprises) with `decoder`, whose typed errors are the ones reported.
    public func decodeResponse(_ response: HTTPResponse, decoder: JSONDecoder) throws -> MomentsDetails {
        try decodeTimeline(response, decoder: decoder, field: "getMomentsDetailsByUserID")
    }

    /// The variables, written without an encoder (this query is sent on every refresh).
    public var encodedVariables: Data? {
        var object = JSONObjectWriter()
        object.add("userID", variables.userID)
        object.add("withLikes", variables.withLikes)
        return object.finished()
    }

    /// Refuses an empty user id before anything is sent.
    public func validate() throws {
        guard !variables.userID.isEmpty else { throw ValidationError("userID is empty") }
    }

    /// The timeline inside the answer's `data`.
    public func extract(_ data: ResponseData) -> MomentsDetails {
        data.getMomentsDetailsByUserID
    }
}
