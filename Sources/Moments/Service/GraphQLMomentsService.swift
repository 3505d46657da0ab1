public import Foundation
public import MomentsNetworking
import MomentsObservability
public import MomentsHTTP

/// A ``MomentsService`` over the BFF's GraphQL API.
///
/// For example:
/// ```swift
/// let service = GraphQLMomentsService(baseURL: URL(string: "https://bff.example.com")!)
/// let timeline = try await service.getMoments(userID: "0")
/// ```
/// Errors are `HTTPClientError`s.
public struct GraphQLMomentsService: MomentsService {
    /// The client the operations are sent through.
    public let client: HTTPClient

    /// Creates a service that sends through `client`.
    public init(client: HTTPClient) {
        self.client = client
    }

    /// Creates a service with its own client for `baseURL`.
    public init(baseURL: URL, transport: any HTTPTransport = URLSessionTransport()) {
        self.init(client: HTTPClient(baseURL: baseURL, transport: transport))
    }

    /// Fetches `userID`'s timeline.
    public func getMoments(userID: String) async throws -> MomentsDetails {
        try await client.send(GetMomentsByUserID(userID: userID))
    }

    /// Fetches `userID`'s timeline under `cachePolicy`.
    public func getMoments(userID: String, cachePolicy: CachePolicy) async throws -> MomentsDetails {
        try await client.send(GetMomentsByUserID(userID: userID, cachePolicy: cachePolicy))
    }

    /// Has `userID` like or unlike `momentID`; returns their timeline as the server then computes it.
    public func updateLike(_ isLiked: Bool, momentID: String, fromUserID userID: String) async throws -> MomentsDetails {
        try await client.send(UpdateMomentLike(isLiked: isLiked, momentID: momentID, userID: userID))
    }

    /// Fetches under `cachePolicy` through the client's cache policies; the answer says
    /// whether it came from the cache, or when its exchange began.
    public func refreshAnswer(userID: String, cachePolicy: CachePolicy) async throws -> MomentsAnswer {
        try await TraceContext.span("moments.service.get_moments", tracer: client.configuration.tracer) { _ in
            MomentsAnswer(try await client.response(for: GetMomentsByUserID(userID: userID, cachePolicy: cachePolicy)))
        }
    }

    /// Fetches under `cachePolicy` through the client's cache policies; each answer says
    /// whether it came from the cache, or when its exchange began.
    public func refreshAnswers(
        userID: String, cachePolicy: CachePolicy, receive: @Sendable (MomentsAnswer) async throws -> Void
    ) async throws {
        try await client.answers(for: GetMomentsByUserID(userID: userID, cachePolicy: cachePolicy)) { response in
            try await receive(MomentsAnswer(response))
        }
    }

    /// The answer of a like, with when its exchange began.
    public func likeAnswer(_ isLiked: Bool, momentID: String, fromUserID userID: String) async throws -> MomentsAnswer {
        try await TraceContext.span("moments.service.update_like", tracer: client.configuration.tracer) { _ in
            MomentsAnswer(try await client.response(for: UpdateMomentLike(isLiked: isLiked, momentID: momentID, userID: userID)))
        }
    }

    /// Removes the cached timeline answers of `userIDs` from the client's cache.
    public func invalidateCachedTimelines(of userIDs: [String]) async {
        for userID in userIDs {
            try? await client.removeCachedResponse(for: GetMomentsByUserID(userID: userID))
        }
    }

    /// Whether the client has a response cache.
    public var cachesTimelines: Bool { client.configuration.cache != nil }
}

extension MomentsAnswer {
    /// The answer of a response from `HTTPClient`.
    init(_ response: DecodedResponse<MomentsDetails>) {
        self.init(details: response.value, origin: response.isFromCache ? .cache : .server(sentAt: response.sentAt))
    }
}
