import Foundation
import MomentsNetworking
import Moments
import MomentsTestSupport
import Testing

/// Code written against `any MomentsRepository` runs the same over the store and over
/// a fake standing in for it in a user's test.
@Suite struct MomentsRepositoryTests {
    /// A user's type built on the SDK: a like button that toggles a moment and says
    /// whether it ended liked.
    struct LikeButton {
        let repository: any MomentsRepository

        func toggle(_ momentID: String, for userID: String) async throws -> Bool {
            var current = try await repository.details(for: userID)
            if current == nil { current = try await repository.refresh(userID: userID) }
            let isLiked = current?.moment(withID: momentID)?.isLiked == true
            let timeline = try await repository.setLike(!isLiked, momentID: momentID, userID: userID)
            return timeline.moment(withID: momentID)?.isLiked == true
        }
    }

    /// What a user's test would write: a repository holding one timeline, whose likes
    /// fail on cue.
    actor FakeRepository: MomentsRepository {
        struct Refused: Error {}
        var timeline: MomentsDetails
        var failsLikes = false
        private(set) var likes: [(Bool, String)] = []

        init(timeline: MomentsDetails) { self.timeline = timeline }

        func failLikes() { failsLikes = true }

        func refresh(userID: String, source: TimelineSource) async throws -> MomentsDetails { timeline }

        func setLike(_ isLiked: Bool, momentID: String, userID: String) async throws -> MomentsDetails {
            if failsLikes { throw Refused() }
            likes.append((isLiked, momentID))
            if let index = timeline.moments.firstIndex(where: { $0.id == momentID }) { timeline.moments[index].isLiked = isLiked }
            return timeline
        }

        func details(for userID: String) async throws -> MomentsDetails? { timeline }

        func updates(for userID: String) async -> AsyncStream<MomentsDetails> {
            AsyncStream { [timeline] in $0.yield(timeline); $0.finish() }
        }

        nonisolated func changes() -> AsyncStream<MomentsChange> { AsyncStream { $0.finish() } }
    }

    @Test func aTypeBuiltOnTheProtocolRunsOverAFake() async throws {
        let fake = FakeRepository(timeline: SampleTimelines.timeline(user: "0", moments: 2))
        let button = LikeButton(repository: fake)
        let first = try #require(await fake.timeline.moments.first?.id)
        let wasLiked = await fake.timeline.moments.first?.isLiked == true
        #expect(try await button.toggle(first, for: "0") == !wasLiked)
        #expect(try await button.toggle(first, for: "0") == wasLiked)
        #expect(await fake.likes.map(\.0) == [!wasLiked, wasLiked])
        await fake.failLikes()
        await #expect(throws: FakeRepository.Refused.self) { try await button.toggle(first, for: "0") }
    }

    @Test func theSameTypeRunsOverTheStore() async throws {
        let service = FakeMomentsService()
        await service.addUser("0", moments: ["a", "b"])
        let store = MomentsStore(service: service, persistence: InMemoryPersistence())
        let button = LikeButton(repository: store)
        #expect(try await button.toggle("a", for: "0") == true)
        #expect(try await service.serverTimeline("0").moment(withID: "a")?.isLiked == true)
        #expect(try await button.toggle("a", for: "0") == false)
        #expect(try await service.serverTimeline("0").moment(withID: "a")?.isLiked == false)
        // Through the protocol, the default refresh and the streams are the store's.
        let repository: any MomentsRepository = store
        let refreshed = try await repository.refresh(userID: "0")
        var updates = await repository.updates(for: "0").makeAsyncIterator()
        #expect(await updates.next() == refreshed)
    }
}
