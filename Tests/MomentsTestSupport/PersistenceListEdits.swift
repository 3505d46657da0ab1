import Moments

extension PersistenceConformance {
    /// Random edits of three users' lists over a few shared moment ids (insert, remove,
    /// move, replace, a kept id listed again, a list naming moments only other
    /// timelines hold), each saved and checked against a model: a save is refused
    /// exactly when its list names an id twice or a moment nobody holds, and after
    /// every step each list loads as the model's and every id has the model's holders.
    enum ListEdits {
        static let users = ["a", "b", "c"]
        static let ids = (0..<10).map { "e\($0)" }

        static func run(_ persistence: any MomentsPersistence, seed: UInt64, steps: Int) async throws {
            var random = SeededGenerator(seed: seed)
            var model: [String: [String]] = [:]
            let owner = SampleTimelines.timeline(user: "a", moments: 0).userDetails
            for step in 0..<steps {
                let context = "seed \(seed) step \(step)"
                let user = users[Int(random.next() % UInt64(users.count))]
                let old = model[user] ?? []
                var list = old
                let edit = random.next() % 6
                if edit < RandomListEdit.count {
                    RandomListEdit.apply(edit, to: &list, ids: ids, using: &random)
                } else {
                    list = ids.shuffled(using: &random).prefix(Int(random.next() % 6)).map { $0 }
                }
                let held = Set(model.values.joined())
                // Edits 0–3 send the list alone, naming moments the storage must already hold.
                let listOnly = edit < 4
                let shouldRefuse = Set(list).count != list.count || (listOnly && list.contains { !held.contains($0) })
                do {
                    if listOnly {
                        let entries = list.map { StoredTimeline.Entry(momentID: $0) }
                        try await persistence.save(PersistenceBatch(timelines: [user: StoredTimeline(userDetails: owner, entries: entries)]))
                    } else {
                        let moments = list.map { SampleTimelines.moment(id: $0, owner: user).withIsLiked(nil) }
                        try await persistence.save(MomentsDetails(userDetails: owner, moments: moments), for: user)
                    }
                    try expect(!shouldRefuse, "\(context): saving \(list) over \(old) should have been refused")
                    model[user] = list
                } catch let error as PersistenceError where error.code == .invalidInput {
                    try expect(shouldRefuse, "\(context): saving \(list) over \(old) was refused: \(error)")
                }
                for user in users {
                    let loaded = try await persistence.load(userID: user)?.moments.map(\.id)
                    try expect(loaded == model[user], "\(context): \(user) loads \(loaded ?? []), expected \(model[user] ?? [])")
                }
                for id in ids {
                    let holders = Set(try await persistence.userIDs(holding: id))
                    let expected = Set(users.filter { model[$0]?.contains(id) == true })
                    try expect(holders == expected, "\(context): \(id) is held by \(holders.sorted()), expected \(expected.sorted())")
                }
            }
        }
    }
}
