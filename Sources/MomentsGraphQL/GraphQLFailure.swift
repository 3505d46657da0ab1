public import Foundation
import MomentsNetworking
public import MomentsHTTP

/// What a GraphQL server said when it answered with errors: the errors, and the
/// `data` it returned beside them, if any. Carried by an `HTTPClientError` whose code
/// is `HTTPClientError.Code.graphQLFailure`.
public struct GraphQLFailure: Sendable {
    /// The errors, in the server's order.
    public let errors: [GraphQLError]
    /// The `data` returned beside the errors, as JSON bytes, if any.
    public let partialData: Data?

    /// A failure of `errors`, with `partialData` if the server returned some.
    public init(errors: [GraphQLError], partialData: Data?) {
        self.errors = errors
        self.partialData = partialData
    }

    /// Decodes the partial `data` as `T`; `nil` if there is none or it does not decode.
    public func decodePartialData<T: Decodable>(as type: T.Type, decoder: JSONDecoder = JSONDecoder()) -> T? {
        partialData.flatMap { try? decoder.decode(T.self, from: $0) }
    }
}

extension HTTPClientError {
    /// The GraphQL errors and partial data, for ``Code-swift.struct/graphQLFailure``;
    /// `nil` for every other code.
    public var graphQL: GraphQLFailure? {
        code == .graphQLFailure ? GraphQLFailure(errors: graphQLErrors, partialData: graphQLPartialData) : nil
    }
}
