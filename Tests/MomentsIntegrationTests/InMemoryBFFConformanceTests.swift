import Foundation
import Moments
import MomentsNetworking
import MomentsTesting
import MomentsTestSupport
import Testing
import MomentsBFF

/// `InMemoryBFF` (of the `MomentsTesting` kit) answers as the reference BFF does: the
/// same seeded likes and unlikes, sent to both, get equal answers, in both `isLiked`
/// models, with and without likes.
@Suite(.serialized) struct InMemoryBFFConformanceTests {
    @Test(arguments: [false, true])
    func seededLikesGetTheReferenceBFFsAnswers(globalIsLiked: Bool) async throws {
        let reference = try await ReferenceBFF(users: 2, momentsPerUser: 3, globalIsLiked: globalIsLiked)
        defer { reference.stop() }
        let memory = InMemoryBFF(isLiked: globalIsLiked ? .global : .perViewer, users: 2, momentsPerUser: 3)
        let real = GraphQLMomentsService(client: HTTPClient.patient(baseURL: reference.baseURL, transport: URLSessionTransport()) { $0.timeout = .seconds(60) })
        let fake = GraphQLMomentsService(baseURL: URL(string: "http://bff.test")!, transport: memory)
        let users = ["0", "1", "2", "3", "user-1", "user-2"]
        let moments = ["0", "1", "2", "3", "user-1-m0", "user-1-m1", "user-2-m2", "no-such-moment"]
        let seed = UInt64.random(in: 0...UInt64.max)
        var generator = SeededGenerator(seed: seed)
        for step in 0..<120 {
            let user = users.randomElement(using: &generator) ?? "0"
            let moment = moments.randomElement(using: &generator) ?? "0"
            let isLiked = Bool.random(using: &generator)
            let expected = try await real.updateLike(isLiked, momentID: moment, fromUserID: user)
            let answered = try await fake.updateLike(isLiked, momentID: moment, fromUserID: user)
            #expect(answered == expected, "seed \(seed), step \(step): \(user) \(isLiked ? "likes" : "unlikes") \(moment)")
            if step % 20 == 19 {
                for viewer in users {
                    let withLikes = Bool.random(using: &generator)
                    let expected = try await real.refreshAnswer(userID: viewer, source: .server, withLikes: withLikes).details
                    let answered = try await fake.refreshAnswer(userID: viewer, source: .server, withLikes: withLikes).details
                    #expect(answered == expected, "seed \(seed), step \(step): \(viewer)'s timeline, withLikes \(withLikes)")
                }
            }
        }
    }
}
