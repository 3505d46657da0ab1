public import Foundation
public import MomentsNetworking
import MomentsSupport
public import MomentsHTTP

/// A GraphQL query or mutation, sent as `POST /graphql` with the body
/// `{"query", "operationName", "variables"}`.
///
/// The answer's `{"data", "errors"}` envelope is decoded for you: errors (also when sent
/// with a failure status such as 400) become `HTTPClientError.Code.graphQLFailure`,
/// keeping every message, path and any partial data; otherwise `data` is decoded as
/// ``ResponseData`` and handed to ``extract(_:)``.
///
/// For example:
/// ```swift
/// struct GetViewer: GraphQLOperation {
///     struct Variables: Encodable, Sendable { var id: String }
///     struct ResponseData: Decodable, Sendable { var viewer: User }
///     static let document = "query viewer($id: ID!) { viewer(id: $id) { id name } }"
///     static let operationName = "viewer"
///     var variables: Variables
///     func extract(_ data: ResponseData) -> User { data.viewer }
/// }
/// ```
public protocol GraphQLOperation: Request {
    /// The operation's variables, encoded as the `variables` object.
    associatedtype Variables: Encodable & Sendable
    /// The shape of the `data` object of a successful answer.
    associatedtype ResponseData: Decodable & Sendable

    /// The GraphQL document.
    static var document: String { get }
    /// The name of the operation in ``document`` to run.
    static var operationName: String { get }
    /// Whether the operation is a mutation (never cached, never retried unless it opts in).
    /// The default is `false`.
    static var isMutation: Bool { get }

    /// The values of the document's variables.
    var variables: Variables { get }

    /// The variables as the bytes of a JSON object the operation writes itself, or
    /// `nil` (the default) to encode ``variables`` with the client's encoder.
    ///
    /// An operation sent very often can skip the encoder this way, writing the object
    /// by hand; the bytes must be the JSON of ``variables``.
    var encodedVariables: Data? { get }

    /// Picks the response value out of the decoded `data`.
    func extract(_ data: ResponseData) throws -> Response
}

/// The body of a GraphQL request.
package struct GraphQLRequestBody<Variables: Encodable & Sendable>: Encodable, Sendable {
    /// The document.
    package let query: String
    /// The operation to run from it.
    package let operationName: String
    /// The operation's variables.
    package let variables: Variables
}

extension GraphQLOperation {
    /// The default is `false`: a query.
    public static var isMutation: Bool { false }
    /// The default is `/graphql`.
    public var path: String { "/graphql" }
    /// Queries are cacheable by their body and may be retried; mutations are never
    /// cached, and are retried only if they opt in (a server that makes them
    /// idempotent).
    public var options: RequestOptions { RequestOptions(allowsRetry: !Self.isMutation, isCacheable: !Self.isMutation) }
    /// Always `POST`.
    public var method: HTTPMethod { .post }
    /// The default is `nil`: the variables are encoded with the client's encoder.
    public var encodedVariables: Data? { nil }

    /// `{"query", "operationName", "variables"}`: the constant document and name are
    /// encoded once per operation type; the variables as ``encodedVariables``, or else
    /// with the client's encoder.
    public var body: RequestBody? {
        if let variables = encodedVariables {
            let prefix = GraphQLBodyPrefixes.prefix(for: Self.self)
            return .data(Data(joining: prefix, variables, closingWith: UInt8(ascii: "}")), contentType: "application/json")
        }
        return .jsonObject(prefix: GraphQLBodyPrefixes.prefix(for: Self.self), endingWith: variables)
    }

    /// Decodes the envelope (``decodeEnvelope(_:decoder:)``).
    public func decodeResponse(_ response: HTTPResponse, decoder: JSONDecoder) throws -> Response {
        try decodeEnvelope(response, decoder: decoder)
    }

    /// Decodes the `{"data", "errors"}` envelope with `decoder`: the standard path,
    /// which an operation with a faster decoding of its own falls back to.
    public func decodeEnvelope(_ response: HTTPResponse, decoder: JSONDecoder) throws -> Response {
        // Foundation's decoder on Linux takes what is not JSON (trailing commas, bad
        // strings and numbers in values it skips): a malformed answer is refused first.
        if let violation = StrictJSON.violation(in: response.body) {
            throw DecodingError.dataCorrupted(DecodingError.Context(codingPath: [], debugDescription: "the answer is not valid JSON: \(violation)"))
        }
        let envelope = try decoder.decode(GraphQLEnvelope<ResponseData>.self, from: response.body)
        if let errors = envelope.errors, !errors.isEmpty {
            throw HTTPClientError.graphQLFailure(errors, partialData: envelope.rawData(in: response.body), response: response)
        }
        switch envelope.data {
        case .success(let data):
            return try extract(data)
        case .failure(let error):
            throw error
        case nil:
            throw HTTPClientError.decodingFailed(
                ResponseData.self,
                error: DecodingError.valueNotFound(ResponseData.self, DecodingError.Context(
                    codingPath: [GraphQLEnvelopeKey.data],
                    debugDescription: "the answer has neither data nor errors"
                )),
                response: response
            )
        }
    }

    /// A failure status whose body is a GraphQL envelope with errors is a GraphQL failure (kept with its partial data), not a bare server error.
    public func failure(for response: HTTPResponse, decoder: JSONDecoder) -> HTTPClientError? {
        guard let envelope = try? decoder.decode(GraphQLEnvelope<ResponseData>.self, from: response.body),
              let errors = envelope.errors, !errors.isEmpty else { return nil }
        return .graphQLFailure(errors, partialData: envelope.rawData(in: response.body), response: response)
    }
}

extension GraphQLOperation where Response == ResponseData {
    /// The decoded `data` itself.
    public func extract(_ data: ResponseData) throws -> Response { data }
}

enum GraphQLEnvelopeKey: String, CodingKey {
    case data, errors
}

/// `{"data", "errors"}`, decoded in one pass; `data` failing to decode is kept as a
/// failure so that errors, when present, are reported first.
struct GraphQLEnvelope<ResponseData: Decodable>: Decodable {
    let data: Result<ResponseData, any Error>?
    let errors: [GraphQLError]?

    init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: GraphQLEnvelopeKey.self)
        errors = try container.decodeIfPresent([GraphQLError].self, forKey: .errors)
        if container.contains(.data), try !container.decodeNil(forKey: .data) {
            do {
                data = .success(try container.decode(ResponseData.self, forKey: .data))
            } catch {
                data = .failure(error)
            }
        } else {
            data = nil
        }
    }

    /// The `data` member as JSON bytes, if it is present and not null.
    func rawData(in body: Data) -> Data? {
        guard data != nil,
              let object = try? JSONSerialization.jsonObject(with: body) as? [String: Any],
              let member = object["data"], !(member is NSNull) else { return nil }
        return try? JSONSerialization.data(withJSONObject: member, options: [.sortedKeys])
    }
}

extension HTTPClientError {
    /// Decodes the partial `data` a GraphQL server sent beside its errors.
    ///
    /// - Throws: ``Code-swift.struct/decodingFailure`` if there is none or it does not
    ///   decode as `T`.
    package func decodeGraphQLPartialData<T: Decodable>(as type: T.Type, decoder: JSONDecoder = JSONDecoder()) throws -> T {
        guard let graphQLPartialData else {
            throw HTTPClientError(code: .decodingFailure, reason: "the GraphQL answer carried no partial data")
        }
        do {
            return try decoder.decode(T.self, from: graphQLPartialData)
        } catch {
            throw HTTPClientError.decodingFailed(T.self, error: error, response: HTTPResponse(statusCode: statusCode ?? 200, body: graphQLPartialData))
        }
    }
}

/// The encoded `{"query":…,"operationName":…,"variables":` of each operation type,
/// made once: the document is the same on every call.
enum GraphQLBodyPrefixes {
    private static let prefixes = PThreadMutex<[ObjectIdentifier: Data]>([:])

    static func prefix<Operation: GraphQLOperation>(for type: Operation.Type) -> Data {
        let key = ObjectIdentifier(type)
        if let known = prefixes.withLock({ $0[key] }) { return known }
        let encoder = JSONEncoder()
        let query = (try? encoder.encode(Operation.document)) ?? Data(#""""#.utf8)
        let name = (try? encoder.encode(Operation.operationName)) ?? Data(#""""#.utf8)
        let prefix = Data(#"{"query":"#.utf8) + query + Data(#","operationName":"#.utf8) + name + Data(#","variables":"#.utf8)
        prefixes.withLock { $0[key] = prefix }
        return prefix
    }
}
