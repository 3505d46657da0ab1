import MomentsHTTP
extension HTTPClientError {
    /// This error with every credential value `secrets` holds removed from its text:
    /// the reason, the transport's message, the decoding excerpt and GraphQL messages.
    func redacting(_ secrets: SentSecrets) -> HTTPClientError {
        guard !secrets.isEmpty else { return self }
        var copy = HTTPClientError(
            code: code,
            reason: secrets.redact(reason),
            response: response,
            transportFailure: transportFailure.map { TransportFailure(kind: $0.kind, message: secrets.redact($0.message)) },
            decodingFailure: decodingFailure.map {
                DecodingFailure(typeName: $0.typeName, codingPath: $0.codingPath,
                                detail: secrets.redact($0.detail), bodyExcerpt: secrets.redact($0.bodyExcerpt))
            },
            graphQLErrors: graphQLErrors.map { GraphQLError(message: secrets.redact($0.message), locations: $0.locations, path: $0.path) },
            graphQLPartialData: graphQLPartialData,
            underlyingError: underlyingError
        )
        copy.method = method
        copy.url = url
        return copy
    }
}
