import Foundation
import Moments
import MomentsHTTP
import MomentsNetworking
import MomentsTesting
import MomentsTestSupport
import Testing
import MomentsBFF

/// What a like button does: likes or unlikes, and says what the user now sees.
struct LikeButtonAction {
    let repository: any MomentsRepository

    func tap(momentID: String, userID: String, like: Bool) async -> String {
        do {
            let timeline = try await repository.setLike(like, momentID: momentID, userID: userID)
            let likes = timeline.moment(withID: momentID)?.likes?.count ?? 0
            return like ? "Liked (\(likes))" : "Unliked (\(likes))"
        } catch {
            return "Try again"
        }
    }
}

/// The article "Testing code built on the SDK": its example runs here as written, and
/// every code block of it is in this file.
@Suite struct TestingYourCodeArticleTests {
    static let article = ArticleCode.root.appendingPathComponent("Sources/MomentsTesting/MomentsTesting.docc/TestingYourCode.md")

    @Test func everyCodeBlockOfTheArticleIsCompiledHere() throws {
        let (missing, count) = try ArticleCode.blocksMissing(from: URL(fileURLWithPath: #filePath), article: Self.article)
        #expect(count == 5)
        #expect(missing.isEmpty, "not in this file:\n\(missing.joined(separator: "\n---\n"))")
    }

    @Test func theArticlesExampleRuns() async throws {
        let bff = InMemoryBFF()
        let network = FaultInjectingTransport(wrapping: bff)
        let client = HTTPClient(baseURL: URL(string: "http://bff.test")!, transport: network)
        let store = MomentsStore(service: GraphQLMomentsService(client: client), persistence: InMemoryPersistence())
        let action = LikeButtonAction(repository: store)
        try await store.refresh(userID: "0")

        #expect(await action.tap(momentID: "1", userID: "0", like: true) == "Liked (1)")
        #expect(bff.likers(of: "1") == ["0"])

        network.inject(.resetAfterRead, times: nil, when: FaultInjectingTransport.operation("updateMomentLike"))
        #expect(await action.tap(momentID: "2", userID: "1", like: true) == "Try again")
        #expect(bff.likers(of: "2") == ["0", "1"])
        await store.waitUntilIdle()
        #expect(try await store.details(for: "1")?.moment(withID: "2")?.isLiked == true)
        network.removeAllFaults()

        network.inject(.refuse)
        #expect(await action.tap(momentID: "0", userID: "0", like: true) == "Try again")
        #expect(bff.likers(of: "0") == ["1", "2"])
    }
}
