import Moments
import MomentsTestSupport
import Testing

/// `InMemoryPersistence` writes a refresh-shaped batch (same lists, moments stored) in
/// place; these tests hold that path to the same results as the general one.
@Suite struct InMemoryPersistenceTests {
    static let users = ["a", "b", "c"]
    static let ids = (0..<6).map { "m\($0)" }

    /// Seeded random saves of three users over shared moments, mostly keeping each
    /// list (new `isLiked`s, owners and moment values), sometimes changing it, and
    /// sometimes naming a moment no timeline holds; after every save each timeline
    /// loads as a model of the saves says.
    @Test(arguments: [1, 2, 3, 4] as [UInt64])
    func valuesWrittenInPlaceLoadAsTheModelSays(seed: UInt64) async throws {
        var random = SeededGenerator(seed: seed)
        let persistence = InMemoryPersistence()
        var lists: [String: [String]] = [:]
        var isLiked: [String: [Bool?]] = [:]
        var owners: [String: UserDetails] = [:]
        var values: [String: Moment] = [:]
        for user in Self.users {
            lists[user] = Array(Self.ids.shuffled(using: &random).prefix(4))
            isLiked[user] = lists[user, default: []].map { _ in nil }
            owners[user] = owner(user, version: 0)
        }
        func save(_ user: String, moments: [String]) async throws {
            let entries = zip(lists[user, default: []], isLiked[user, default: []]).map { StoredTimeline.Entry(momentID: $0, isLiked: $1) }
            let batch = PersistenceBatch(timelines: [user: StoredTimeline(userDetails: owners[user, default: owner(user, version: 0)], entries: entries)],
                                         moments: moments.compactMap { values[$0] })
            try await persistence.save(batch)
        }
        for user in Self.users {
            for id in lists[user, default: []] where values[id] == nil { values[id] = moment(id, version: 0) }
            try await save(user, moments: lists[user, default: []])
        }
        for step in 0..<300 {
            let user = Self.users[Int(random.next() % 3)]
            let kind = random.next() % 10
            var written: [String] = []
            if kind == 0 {
                // A new list (the general path).
                lists[user] = Array(Self.ids.shuffled(using: &random).prefix(Int(random.next() % 5) + 1))
                isLiked[user] = lists[user, default: []].map { _ in Bool.random(using: &random) }
                written = lists[user, default: []]
                for id in written { values[id] = moment(id, version: step) }
            } else {
                isLiked[user] = isLiked[user, default: []].map { old in random.next() % 3 == 0 ? Bool.random(using: &random) : old }
                if random.next() % 4 == 0 { owners[user] = owner(user, version: step) }
                for id in lists[user, default: []] where random.next() % 3 == 0 {
                    values[id] = moment(id, version: step)
                    written.append(id)
                }
                // A moment no timeline holds: the batch takes the general path, which ignores it.
                if kind == 1, let stray = Self.ids.first(where: { id in !Self.users.contains { lists[$0, default: []].contains(id) } }) {
                    values[stray] = moment(stray, version: step)
                    written.append(stray)
                }
            }
            try await save(user, moments: written)
            for user in Self.users {
                let loaded = await persistence.load(userID: user)
                let expected = MomentsDetails(userDetails: owners[user, default: owner(user, version: 0)], moments: zip(lists[user, default: []], isLiked[user, default: []]).map { id, liked in
                    values[id, default: moment(id, version: 0)].withIsLiked(liked)
                })
                #expect(loaded == expected, "seed \(seed) step \(step): \(user) loads a timeline the saves did not make")
            }
        }
    }

    /// A timeline given to `init` is checked whole on its first save, even when that
    /// save keeps its list (and could be written in place).
    @Test func aListGivenAtInitNamingAMomentTwiceIsRefusedOnItsFirstSave() async throws {
        let twice = MomentsDetails(userDetails: owner("a", version: 0), moments: [moment("m0", version: 0), moment("m0", version: 0)])
        let persistence = InMemoryPersistence(["a": twice])
        let again = StoredTimeline(twice)
        await #expect(throws: PersistenceError.self) {
            try await persistence.save(PersistenceBatch(timelines: ["a": again]))
        }
    }

    func owner(_ user: String, version: Int) -> UserDetails {
        UserDetails(id: user, name: "User \(user)", avatar: "https://images.example.com/\(user)-\(version).jpg",
                    backgroundImage: "https://images.example.com/\(user)-background.jpg")
    }

    func moment(_ id: String, version: Int) -> Moment {
        Moment(id: id, userDetails: Moment.MomentUserDetails(id: "author", name: "Author", avatar: "https://images.example.com/author.jpg"),
               type: .url, title: "\(id) v\(version)", url: "https://example.com/\(id)", createdDate: "1700000000", isLiked: nil,
               likes: version % 2 == 0 ? [] : [Moment.LikedUser(id: "x", avatar: "https://images.example.com/x.jpg")])
    }
}
