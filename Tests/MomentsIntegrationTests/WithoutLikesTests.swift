import Foundation
import Moments
import MomentsNetworking
import MomentsTestSupport
import Testing
import MomentsBFF

/// The BFF's `withLikes` feature toggle, from the service and from the store's
/// configuration, against the reference BFF (which honours `@include(if: $withLikes)`).
@Suite(.serialized) struct WithoutLikesTests {
    private static func client(_ bff: ReferenceBFF) -> HTTPClient {
        HTTPClient.patient(baseURL: bff.baseURL, transport: URLSessionTransport()) { $0.timeout = .seconds(60) }
    }

    @Test func aServiceWithoutLikesFetchesTimelinesWithoutThemAndLikesStillAnswerWithThem() async throws {
        let bff = try await ReferenceBFF()
        defer { bff.stop() }
        let service = GraphQLMomentsService(client: Self.client(bff), withLikes: false)

        let timeline = try await service.getMoments(userID: "0")
        #expect(timeline.moments.count == 4)
        #expect(timeline.moments.allSatisfy { $0.isLiked == nil && $0.likes == nil })
        let answer = try await service.refreshAnswer(userID: "0", source: .server, withLikes: true)
        #expect(answer.details.moments.allSatisfy { $0.isLiked == nil && $0.likes == nil }, "the service's own toggle is off")

        let liked = try await service.updateLike(true, momentID: "1", fromUserID: "0")
        #expect(liked.moment(withID: "1")?.isLiked == true)
        #expect(liked.moment(withID: "1")?.likes?.map(\.id) == ["0"])
    }

    @Test func aServiceWithLikesFetchesThemUnlessTheCallerDoesNotWantThem() async throws {
        let bff = try await ReferenceBFF()
        defer { bff.stop() }
        let service = GraphQLMomentsService(client: Self.client(bff))

        #expect(try await service.getMoments(userID: "0").moments.map(\.isLiked) == [false, false, true, false])
        let without = try await service.refreshAnswer(userID: "0", source: .server, withLikes: false)
        #expect(without.details.moments.allSatisfy { $0.isLiked == nil && $0.likes == nil })
    }

    @Test func aStoreWithoutLikesFetchesNoneAndRefusesToLikeWithoutSendingAnything() async throws {
        let bff = try await ReferenceBFF()
        defer { bff.stop() }
        let client = Self.client(bff)
        let store = MomentsStore(
            service: GraphQLMomentsService(client: client), persistence: InMemoryPersistence(),
            configuration: .init { $0.withLikes = false }
        )

        let timeline = try await store.refresh(userID: "0")
        #expect(timeline.moments.map(\.id) == ["0", "1", "2", "3"])
        #expect(timeline.moments.allSatisfy { $0.isLiked == nil && $0.likes == nil })

        let refusal = await #expect(throws: MomentsStoreError.self) {
            try await store.setLike(true, momentID: "1", userID: "0")
        }
        #expect(refusal?.code == .likesNotFetched)
        #expect(refusal?.momentID == "1")
        let server = try await GraphQLMomentsService(client: client).getMoments(userID: "0")
        #expect(server.moment(withID: "1")?.isLiked == false, "nothing was sent")
        #expect(try await store.details(for: "0")?.moments.allSatisfy { $0.isLiked == nil } == true)
    }
}
