import Moments
import MomentsTestSupport
import Testing

/// Whether a failed like may have reached the server is the service's to say
/// (`MomentsService.likeMayHaveReachedServer(failingWith:)`), for errors of its own
/// kind: the store asks the server what happened only when the service says the like
/// may have been applied, and otherwise takes the intent back without a request.
@Suite struct MomentsStoreLikeReachTests {
    /// A backend whose likes fail with an error of its own, which says whether the
    /// request was sent (and then the server applied the like and its answer was lost).
    private struct LosingService: MomentsService {
        struct Failure: Error {
            let wasSent: Bool
        }

        let server = FakeMomentsService()
        let likesAreSent: Bool

        func getMoments(userID: String) async throws -> MomentsDetails {
            try await server.getMoments(userID: userID)
        }

        func updateLike(_ isLiked: Bool, momentID: String, fromUserID userID: String) async throws -> MomentsDetails {
            if likesAreSent { _ = try await server.updateLike(isLiked, momentID: momentID, fromUserID: userID) }
            throw Failure(wasSent: likesAreSent)
        }

        func likeMayHaveReachedServer(failingWith error: any Error) -> Bool {
            (error as? Failure)?.wasSent ?? true
        }
    }

    private func likeFails(_ service: LosingService) async throws -> (shown: Moment?, gets: Int) {
        await service.server.addUser("0", moments: ["1", "2"])
        let store = MomentsStore(service: service, persistence: InMemoryPersistence())
        try await store.refresh(userID: "0")
        await #expect(throws: LosingService.Failure.self) { try await store.setLike(true, momentID: "1", userID: "0") }
        await store.waitUntilIdle()
        let shown = try await store.details(for: "0")?.moment(withID: "1")
        let gets = await service.server.calls.filter { $0.hasPrefix("get") }.count
        return (shown, gets)
    }

    @Test func aLikeTheServiceSaysWasNeverSentIsTakenBackWithoutAskingTheServer() async throws {
        let (shown, gets) = try await likeFails(LosingService(likesAreSent: false))
        #expect(shown?.isLiked == false)
        #expect(gets == 1, "only the first refresh: the service said nothing was sent")
    }

    @Test func aLikeTheServiceSaysMayHaveBeenSentIsSettledWithTheServer() async throws {
        let (shown, gets) = try await likeFails(LosingService(likesAreSent: true))
        #expect(shown?.isLiked == true, "the server applied it; the store asked and shows it")
        #expect(shown?.likes?.map(\.id) == ["0"])
        #expect(gets == 2, "the first refresh, then the refetch that settles the like")
    }
}
