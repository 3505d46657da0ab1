public import Foundation
public import MomentsNetworking

/// A ``MomentsService`` over the BFF's GraphQL API.
///
/// For example:
/// ```swift
/// let service = GraphQLMomentsService(baseURL: URL(string: "https://bff.example.com")!)
/// let timeline = try await service.getMoments(userID: "0")
/// ```
/// Errors are ``HTTPClientError``s.
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

    public func getMoments(userID: String) async throws -> MomentsDetails {
        try await client.send(GetMomentsByUserID(userID: userID))
    }

    public func getMoments(userID: String, cachePolicy: CachePolicy) async throws -> MomentsDetails {
        try await client.send(GetMomentsByUserID(userID: userID, cachePolicy: cachePolicy))
    }

    public func updateLike(_ isLiked: Bool, momentID: String, fromUserID userID: String) async throws -> MomentsDetails {
        try await client.send(UpdateMomentLike(isLiked: isLiked, momentID: momentID, userID: userID))
    }
}
