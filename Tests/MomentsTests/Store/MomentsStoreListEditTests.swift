import Moments
import MomentsTestSupport
import Testing

/// Timelines whose lists change from answer to answer (a moment added, dropped, moved,
/// listed twice, or a new list), over moments several users share: after each answer
/// every timeline, in memory and persisted, lists its user's last accepted list, each
/// moment with the last value any answer gave it (and `isLiked` as the user's own last
/// answer gave it); an answer naming a moment twice changes nothing.
@Suite struct MomentsStoreListEditTests {
    static let users = ["a", "b", "c"]
    static let ids = (0..<8).map { "e\($0)" }

    /// Answers each refresh with the list the test set for that user.
    private actor ListService: MomentsService {
        var answers: [String: MomentsDetails] = [:]

        func answer(_ details: MomentsDetails, for userID: String) { answers[userID] = details }

        func getMoments(userID: String) -> MomentsDetails {
            answers[userID] ?? Fixtures.timeline(user: userID, moments: [])
        }

        func updateLike(_ isLiked: Bool, momentID: String, fromUserID userID: String) -> MomentsDetails {
            getMoments(userID: userID)
        }
    }

    @Test(arguments: [1, 2, 3, 4] as [UInt64])
    func everyTimelineFollowsItsListsAndEveryMomentItsLastValue(seed: UInt64) async throws {
        var random = SeededGenerator(seed: seed)
        let service = ListService()
        let persistence = InMemoryPersistence()
        let store = MomentsStore(service: service, persistence: persistence)
        var lists: [String: [String]] = [:]
        var likers: [String: [String]] = [:]
        /// Each user's `isLiked` of each moment, as their last accepted answer gave it.
        var isLiked: [String: [String: Bool?]] = [:]

        for step in 0..<300 {
            let context = "seed \(seed) step \(step)"
            let user = Self.users[Int(random.next() % UInt64(Self.users.count))]
            var list = lists[user] ?? []
            let edit = random.next() % 6
            if edit < RandomListEdit.count {
                RandomListEdit.apply(edit, to: &list, ids: Self.ids, using: &random)
            } else if edit == 4 {
                list = Array(Self.ids.shuffled(using: &random).prefix(Int(random.next() % 7)))
            }  // else the same list, with new likes
            // Each answer gives each of its moments a new set of likers.
            var answered = likers
            for id in list { answered[id] = Self.users.filter { _ in random.next() % 2 == 0 } }
            let answer = Fixtures.timeline(user: user, moments: list.map { Fixtures.moment($0, likedBy: answered[$0] ?? [], viewer: user) })
            await service.answer(answer, for: user)

            if Set(list).count != list.count {
                let error = await #expect(throws: MomentsStoreError.self, "\(context)") { try await store.refresh(userID: user) }
                #expect(error?.code == .duplicateMomentID, "\(context)")
            } else {
                let details = try await store.refresh(userID: user)
                #expect(details == answer, "\(context): \(user) shows \(details.moments.map(\.id)), expected \(list)")
                lists[user] = list
                likers = answered
                for moment in answer.moments { isLiked[user, default: [:]][moment.id] = moment.isLiked }
            }
            for user in Self.users {
                let expected = lists[user].map { list in
                    Fixtures.timeline(user: user, moments: list.map {
                        Fixtures.moment($0, likedBy: likers[$0] ?? [], viewer: user).withIsLiked(isLiked[user]?[$0] ?? nil)
                    })
                }
                #expect(try await store.details(for: user) == expected, "\(context): \(user) in memory")
                #expect(await persistence.load(userID: user) == expected, "\(context): \(user) persisted")
            }
        }
    }
}
