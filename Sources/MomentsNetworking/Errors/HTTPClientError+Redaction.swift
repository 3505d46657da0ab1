import Foundation
import MomentsHTTP
extension HTTPClientError {
    /// This error with every credential value `secrets` holds removed from its text:
    /// the reason, the transport's message, the decoding excerpt and GraphQL messages.
    func redacting(_ secrets: SentSecrets) -> HTTPClientError {
        guard !secrets.isEmpty else { return self }
        return rewritingText(secrets.redact)
    }

    /// This error with every mention of `old` in its text made `new`.
    func replacing(_ old: String, with new: String) -> HTTPClientError {
        rewritingText { $0.replacingOccurrences(of: old, with: new) }
    }

    /// This error with `rewrite` applied to its text: the reason, the transport's
    /// message, the decoding excerpt and GraphQL messages.
    private func rewritingText(_ rewrite: (String) -> String) -> HTTPClientError {
        var copy = HTTPClientError(
            code: code,
            reason: rewrite(reason),
            response: response,
            transportFailure: transportFailure.map { TransportFailure(kind: $0.kind, message: rewrite($0.message)) },
            decodingFailure: decodingFailure.map {
                DecodingFailure(typeName: $0.typeName, codingPath: $0.codingPath,
                                detail: rewrite($0.detail), bodyExcerpt: rewrite($0.bodyExcerpt))
            },
            graphQLErrors: graphQLErrors.map { GraphQLError(message: rewrite($0.message), locations: $0.locations, path: $0.path) },
            graphQLPartialData: graphQLPartialData,
            underlyingError: underlyingError
        )
        copy.method = method
        copy.url = url
        return copy
    }
}
