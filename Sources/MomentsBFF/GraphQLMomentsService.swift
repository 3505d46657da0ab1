public import Foundation
public import MomentsNetworking
import MomentsObservability
public import MomentsHTTP
public import Moments

/// A `MomentsService` over the BFF's GraphQL API.
///
/// For example:
/// ```swift
/// let service = GraphQLMomentsService(baseURL: URL(string: "https://bff.example.com")!)
/// let timeline = try await service.getMoments(userID: "0")
/// ```
/// Errors are `HTTPClientError`s.
///
/// With ``withLikes`` `false` (the BFF's feature toggle), timelines are fetched without
/// `isLiked` and `likes` (`@include(if: $withLikes)`): a smaller answer, and moments
/// whose fields of those names are `nil`. A like's answer always carries them.
public struct GraphQLMomentsService: MomentsService {
    /// The client the operations are sent through.
    public let client: HTTPClient

    /// Whether timelines are fetched with `isLiked` and `likes`. A fetch asks for them
    /// only when this and the caller's `withLikes` (`MomentsStore`'s
    /// `Configuration.withLikes`) both want them. The default is `true`.
    public var withLikes: Bool

    /// Creates a service that sends through `client`, fetching likes with timelines
    /// unless `withLikes` is `false`.
    public init(client: HTTPClient, withLikes: Bool = true) {
        self.client = client
        self.withLikes = withLikes
    }

    /// Creates a service with its own client for `baseURL`, fetching likes with
    /// timelines unless `withLikes` is `false`.
    public init(baseURL: URL, transport: any HTTPTransport = URLSessionTransport(), withLikes: Bool = true) {
        self.init(client: HTTPClient(baseURL: baseURL, transport: transport), withLikes: withLikes)
    }

    /// Fetches `userID`'s timeline, with likes if ``withLikes``.
    public func getMoments(userID: String) async throws -> MomentsDetails {
        try await client.send(GetMomentsByUserID(userID: userID, withLikes: withLikes))
    }

    /// Fetches `userID`'s timeline under `cachePolicy`, with likes if ``withLikes``.
    public func getMoments(userID: String, cachePolicy: CachePolicy) async throws -> MomentsDetails {
        try await client.send(GetMomentsByUserID(userID: userID, withLikes: withLikes, cachePolicy: cachePolicy))
    }

    /// Has `userID` like or unlike `momentID`; returns their timeline as the server then computes it.
    public func updateLike(_ isLiked: Bool, momentID: String, fromUserID userID: String) async throws -> MomentsDetails {
        try await client.send(UpdateMomentLike(isLiked: isLiked, momentID: momentID, userID: userID))
    }

    /// Fetches from `source` through the client's cache policy of the same meaning
    /// (`TimelineSource.server` is `CachePolicy.remote`, `TimelineSource.cacheElseServer`
    /// is `.localOrRemote`, and so on); the answer says whether it came from the cache,
    /// or when its exchange began.
    public func refreshAnswer(userID: String, source: TimelineSource, withLikes: Bool) async throws -> MomentsAnswer {
        try await TraceContext.span("moments.service.get_moments", tracer: client.configuration.tracer) { _ in
            MomentsAnswer(try await client.response(for: GetMomentsByUserID(userID: userID, withLikes: withLikes && self.withLikes, cachePolicy: CachePolicy(source))))
        }
    }

    /// Fetches from `source` through the client's cache policy of the same meaning; each
    /// answer says whether it came from the cache, or when its exchange began.
    public func refreshAnswers(
        userID: String, source: TimelineSource, withLikes: Bool, receive: @Sendable (MomentsAnswer) async throws -> Void
    ) async throws {
        try await client.answers(for: GetMomentsByUserID(userID: userID, withLikes: withLikes && self.withLikes, cachePolicy: CachePolicy(source))) { response in
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
            for withLikes in [true, false] {
                try? await client.removeCachedResponse(for: GetMomentsByUserID(userID: userID, withLikes: withLikes))
            }
        }
    }

    /// Whether the client has a response cache.
    public var cachesTimelines: Bool { client.configuration.cache != nil }

    /// Whether a like that failed with `error` may have been applied: for the client's
    /// errors, `HTTPClientError.mayHaveReachedServer`.
    public func likeMayHaveReachedServer(failingWith error: any Error) -> Bool {
        guard let error = error as? HTTPClientError else { return !(error is CancellationError) }
        return error.mayHaveReachedServer
    }
}

extension MomentsAnswer {
    /// The answer of a response from `HTTPClient`.
    init(_ response: DecodedResponse<MomentsDetails>) {
        self.init(details: response.value, origin: response.isFromCache ? .cache : .server(sentAt: response.sentAt))
    }
}

extension CachePolicy {
    /// The client's policy that takes a timeline from `source`.
    public init(_ source: TimelineSource) {
        switch source {
        case .server: self = .remote
        case .cache: self = .local
        case .cacheElseServer: self = .localOrRemote
        case .cacheThenServer: self = .localThenRemote
        case .serverElseCache: self = .remoteThenLocal
        }
    }
}
