import Foundation
import Moments
import MomentsHTTP
import MomentsGraphQL
import MomentsNetworking
import MomentsTesting
import Testing
import MomentsBFF

/// `InMemoryBFF` through the SDK's own client and service: the reference BFF's data and
/// rules (shared moments, atomic idempotent likes, both `isLiked` models, the `withLikes`
/// toggle, GraphQL errors), without a socket.
@Suite struct InMemoryBFFTests {
    private func service(_ bff: InMemoryBFF, withLikes: Bool = true) -> GraphQLMomentsService {
        GraphQLMomentsService(baseURL: URL(string: "http://bff.test")!, transport: bff, withLikes: withLikes)
    }

    @Test func theSampleTimelineAsTheReferenceBFFAnswersIt() async throws {
        let timeline = try await service(InMemoryBFF()).getMoments(userID: "0")
        #expect(timeline.userDetails.name == "Jake Lin")
        #expect(timeline.moments.map(\.id) == ["0", "1", "2", "3"])
        #expect(timeline.moments.map(\.isLiked) == [false, false, true, false])
        #expect(timeline.moments[0].likes?.map(\.id) == ["1", "2"])
        #expect(timeline.moments[0].userDetails.id == "1")
        #expect(timeline.moments[1].title == nil && timeline.moments[1].url == nil)
        #expect(timeline.moments[2].title == "東京の夜 🌃 — café")
        #expect(timeline.moments[0].createdAt == Date(timeIntervalSince1970: 1_605_521_360))
    }

    @Test func aLikeIsSharedByEveryTimelineThatHoldsTheMomentAndLikingTwiceChangesNothing() async throws {
        let bff = InMemoryBFF(users: 1, momentsPerUser: 2)
        let service = service(bff)
        let answer = try await service.updateLike(true, momentID: "0", fromUserID: "user-1")
        #expect(answer.userDetails.id == "user-1")
        #expect(answer.moment(withID: "0")?.isLiked == true)
        _ = try await service.updateLike(true, momentID: "0", fromUserID: "user-1")
        #expect(bff.likers(of: "0") == ["1", "2", "user-1"])
        #expect(try await service.getMoments(userID: "3").moment(withID: "0")?.likes?.map(\.id) == ["1", "2", "user-1"])
        #expect(try await service.getMoments(userID: "3").moment(withID: "0")?.isLiked == false, "per viewer")
        #expect(bff.mutationCount == 2)

        _ = try await service.updateLike(true, momentID: "no-such-moment", fromUserID: "0")
        let unknownUser = await #expect(throws: HTTPClientError.self) { try await service.updateLike(true, momentID: "0", fromUserID: "9") }
        #expect(unknownUser?.graphQL?.errors.first?.message == "no user with id '9'", "\(String(describing: unknownUser))")
    }

    @Test func theGlobalModelKeepsOneIsLikedPerMomentSetByTheLastLiker() async throws {
        let bff = InMemoryBFF(isLiked: .global)
        let service = service(bff)
        #expect(try await service.getMoments(userID: "3").moment(withID: "0")?.isLiked == true, "someone likes it")
        _ = try await service.updateLike(false, momentID: "0", fromUserID: "3")
        #expect(try await service.getMoments(userID: "1").moment(withID: "0")?.isLiked == false, "though user 1 still likes it")
        #expect(bff.likers(of: "0") == ["1", "2"])
    }

    @Test func withoutLikesTheAnswerLeavesThemOut() async throws {
        let timeline = try await service(InMemoryBFF(), withLikes: false).getMoments(userID: "0")
        #expect(timeline.moments.count == 4)
        #expect(timeline.moments.allSatisfy { $0.isLiked == nil && $0.likes == nil })
    }

    @Test func badRequestsAreRefusedAsTheBFFRefusesThem() async throws {
        let bff = InMemoryBFF()
        let url = URL(string: "http://bff.test/graphql")!
        let notJSON = try await bff.send(HTTPRequest(method: .post, url: url, body: Data("query".utf8)))
        #expect(notJSON.statusCode == 400)
        let get = try await bff.send(HTTPRequest(method: .get, url: url))
        #expect(get.statusCode == 405)
        let unknownUser = await #expect(throws: HTTPClientError.self) { try await service(bff).getMoments(userID: "nobody") }
        #expect(unknownUser?.graphQL?.errors.first?.message == "no user with id 'nobody'")
    }

    @Test func aPostAndAnotherClientsLikeShowInTheNextAnswer() async throws {
        let bff = InMemoryBFF()
        bff.post(momentID: "new", by: "2", to: "0", title: "Hello")
        bff.setLike(true, momentID: "new", userID: "3")
        let timeline = try await service(bff).getMoments(userID: "0")
        #expect(timeline.moments.first?.id == "new")
        #expect(timeline.moments.first?.likes?.map(\.id) == ["3"])
        #expect(bff.queryCount == 1)
    }
}
