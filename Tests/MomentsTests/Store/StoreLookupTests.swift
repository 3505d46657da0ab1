@testable import Moments
import MomentsTestSupport
import Testing

/// The store's shortcuts for what one step asks for again and again must answer exactly
/// what the long way answers, whatever changed in between: a change for its viewer
/// alone keeps no set of holders, a timeline remembers the last position it found, and
/// the state remembers the last record and timeline it looked up.
@Suite struct StoreLookupTests {
    static func moment(_ id: String, likes: [String] = []) -> Moment {
        Moment(id: id, userDetails: .init(id: "a", name: "A", avatar: "a.jpg"), type: .url, url: "https://example.com/\(id)",
               createdDate: "1", likes: likes.map { Moment.LikedUser(id: $0, avatar: "\($0).jpg") })
    }

    @Test func aChangeForItsViewerAloneIsTheChangeWithThatViewerAsItsHolders() {
        let moment = Self.moment("m", likes: ["u"])
        for (isLiked, view) in [(Bool?.none, Moment?.none), (true, nil), (nil, Self.moment("m", likes: []))] {
            let alone = MomentChange(moment: moment, phase: .confirmed, likedBy: "u", holders: nil, viewer: "u", isLiked: isLiked, view: view)
            let named = MomentChange(moment: moment, phase: .confirmed, likedBy: "u", holders: ["u"], viewer: "u", isLiked: isLiked, view: view)
            #expect(alone.holders == ["u"])
            #expect(alone == named)
            #expect(alone.hashValue == named.hashValue)
            #expect(alone.moment(for: "u") == named.moment(for: "u"))
            #expect(alone.moment(for: "other") == named.moment(for: "other"))
            #expect(MomentsChange(sequence: 1, kind: .moment(alone)).userIDs == ["u"])
        }
        let other = MomentChange(moment: moment, phase: .confirmed, likedBy: "u", holders: ["u", "v"], viewer: "u", isLiked: nil, view: nil)
        #expect(MomentChange(moment: moment, phase: .confirmed, likedBy: "u", holders: nil, viewer: "u", isLiked: nil, view: nil) != other)
    }

    /// Seeded lists of 0 to 6 ids from a pool of 8, each replacing the last, and every
    /// id asked for in between: the position found is the one a walk of the list finds.
    @Test func aTimelineFindsEveryPositionAfterItsListChanges() {
        var random = SeededGenerator(seed: 46)
        let pool = (0..<8).map { "m\($0)" }
        let timeline = TimelineRecord(userDetails: UserDetails(id: "u", name: "U", avatar: "u.jpg", backgroundImage: "b.jpg"), entries: [], members: [],
                                      evidence: .ofUnknownAge(receivedAt: StoreInstant(nanoseconds: 0)), lastUse: 0)
        for _ in 0..<500 {
            let ids = Array(pool.shuffled(using: &random).prefix(Int.random(in: 0...6, using: &random)))
            let records = ids.map { MomentRecord(value: Self.moment($0), evidence: .ofUnknownAge(receivedAt: StoreInstant(nanoseconds: 0))) }
            timeline.replaceList(with: ids.map { StoredTimeline.Entry(momentID: $0, isLiked: nil) }, members: records)
            for _ in 0..<6 {
                let asked = pool.randomElement(using: &random) ?? "m0"
                #expect(timeline.position(of: asked) == ids.firstIndex(of: asked), "ids \(ids), asked \(asked)")
            }
        }
    }

    /// What the state remembers of its last lookups never outlives the timeline or
    /// record it found: a forgotten timeline is gone, a swept record is gone, and the
    /// record an answer then makes for the same id is the one found.
    @Test func aRememberedLookupNeverOutlivesWhatItFound() throws {
        let state = StoreState(capacity: 10)
        let details = MomentsDetails(userDetails: UserDetails(id: "u", name: "U", avatar: "u.jpg", backgroundImage: "b.jpg"),
                                     moments: [Self.moment("m1"), Self.moment("m2")])
        func evidence(_ at: Int64) -> Evidence { Evidence(sent: StoreInstant(nanoseconds: at), received: StoreInstant(nanoseconds: at + 1)) }
        _ = try state.apply(details, for: "u", evidence: evidence(10), source: .server(likeOf: nil)) { _ in false }
        let first = try #require(state.record("m1"))
        #expect(state.timeline("u") != nil && state.touch("u"))
        state.forget("u")
        #expect(state.timeline("u") == nil)
        #expect(!state.touch("u"))
        state.sweepRetired(oldestRequest: nil)
        #expect(state.record("m1") == nil)
        #expect(!state.timeline(of: "u", holds: "m1"))
        _ = try state.apply(details, for: "u", evidence: evidence(20), source: .server(likeOf: nil)) { _ in false }
        let second = try #require(state.record("m1"))
        #expect(second !== first)
        #expect(state.timeline("u")?.members.first === second)
        #expect(state.timeline(of: "u", holds: "m1"))
    }
}
