@testable import Moments
import Testing

/// The ordering rule applied to ``StoreState`` directly, one answer at a time, beside the
/// simulations that apply it in every order: each case starts from the same timeline
/// and names what the answer's source and age must change, persist and leave to the
/// server.
@Suite struct StoreStateReducerTests {
    /// How an answer's age stands against the timeline's (the server answered the
    /// timeline between instants 100 and 200).
    enum Age: String {
        /// Sent after the timeline was received: certainly newer.
        case newer
        /// Received before the timeline was sent: certainly older.
        case older
        /// Overlapping the timeline's exchange: of unknown order.
        case overlapping
        /// No sending instant (a cache, a persisted value): never newer than anything.
        case unknown

        var evidence: Evidence {
            switch self {
            case .newer: Evidence(sent: StoreInstant(nanoseconds: 300), received: StoreInstant(nanoseconds: 400))
            case .older: Evidence(sent: StoreInstant(nanoseconds: 10), received: StoreInstant(nanoseconds: 50))
            case .overlapping: Evidence(sent: StoreInstant(nanoseconds: 150), received: StoreInstant(nanoseconds: 400))
            case .unknown: Evidence(sent: nil, received: StoreInstant(nanoseconds: 400))
            }
        }
    }

    struct Case: CustomTestStringConvertible, Sendable {
        let name: String
        let source: StoreState.Source
        let age: Age
        /// The answer's moments, as `moment(_:likers:isLiked:)` describes them.
        let answer: [(id: String, likers: [String], isLiked: Bool)]
        var changedMoments: [String] = []
        var changedEntries: [String] = []
        var needsConvergence = false
        var writtenMoments: [String] = []
        var writesTimeline = false
        var timelineChange: TimelineChange.Reason?
        /// After the answer: each moment's confirmed likers, and the owner's `isLiked`.
        var likers: [String: [String]] = ["m1": [], "m2": ["x"]]
        var isLiked: [String: Bool] = ["m1": false, "m2": false]

        var testDescription: String { name }
    }

    /// The timeline every case starts from: the owner `u` sees m1 (no likes) and m2
    /// (liked by `x`), liking neither.
    static let start: [(id: String, likers: [String], isLiked: Bool)] = [("m1", [], false), ("m2", ["x"], false)]

    static let cases: [Case] = [
        Case(name: "a newer answer that changes nothing changes and writes nothing", source: .server(likeOf: nil), age: .newer, answer: start),
        Case(name: "a newer answer replaces a moment's likes, for every holder, and writes the moment",
             source: .server(likeOf: nil), age: .newer, answer: [("m1", [], false), ("m2", ["x", "y"], false)],
             changedMoments: ["m2"], writtenMoments: ["m2"], likers: ["m1": [], "m2": ["x", "y"]]),
        Case(name: "a newer answer replaces the owner's isLiked alone, and writes the timeline",
             source: .server(likeOf: nil), age: .newer, answer: [("m1", [], true), ("m2", ["x"], false)],
             changedEntries: ["m1"], writesTimeline: true, isLiked: ["m1": true, "m2": false]),
        Case(name: "a newer answer listing other moments replaces the list",
             source: .server(likeOf: nil), age: .newer, answer: [("m3", [], false), ("m1", [], false)],
             writtenMoments: ["m3"], writesTimeline: true, timelineChange: .replaced,
             likers: ["m1": [], "m3": []], isLiked: ["m1": false, "m3": false]),
        Case(name: "an older answer changes nothing and asks nothing",
             source: .server(likeOf: nil), age: .older, answer: [("m1", [], true), ("m2", ["x", "y"], false)]),
        Case(name: "an overlapping answer that disagrees on likes is left to the server",
             source: .server(likeOf: nil), age: .overlapping, answer: [("m1", [], false), ("m2", ["x", "y"], false)],
             needsConvergence: true),
        Case(name: "an overlapping answer that disagrees on isLiked is left to the server",
             source: .server(likeOf: nil), age: .overlapping, answer: [("m1", [], true), ("m2", ["x"], false)],
             needsConvergence: true),
        Case(name: "an overlapping answer that agrees asks nothing", source: .server(likeOf: nil), age: .overlapping, answer: start),
        Case(name: "a cached answer never replaces what the store holds, and is left to the server",
             source: .cache, age: .unknown, answer: [("m1", [], true), ("m2", ["x", "y"], false)], needsConvergence: true),
        Case(name: "a persisted answer never replaces what the store holds, and asks nothing",
             source: .persisted, age: .unknown, answer: [("m1", [], true), ("m2", ["x", "y"], false)]),
        Case(name: "a like's answer of unknown order pins the liker's place in likes and own isLiked",
             source: .server(likeOf: "m1"), age: .overlapping, answer: [("m1", ["u"], true), ("m2", ["x"], false)],
             changedMoments: ["m1"], changedEntries: ["m1"], needsConvergence: true, writtenMoments: ["m1"], writesTimeline: true,
             likers: ["m1": ["u"], "m2": ["x"]], isLiked: ["m1": true, "m2": false]),
        Case(name: "another instance's newer value is taken and written by no one here",
             source: .shared, age: .newer, answer: [("m1", [], false), ("m2", ["x", "y"], false)],
             changedMoments: ["m2"], likers: ["m1": [], "m2": ["x", "y"]]),
        Case(name: "another instance's older value is declined and left to the server",
             source: .shared, age: .older, answer: [("m1", [], false), ("m2", ["x", "y"], false)], needsConvergence: true),
    ]

    @Test(arguments: cases)
    func anAnswerChangesWhatItsSourceAndAgeAllow(_ expected: Case) throws {
        let state = StoreState(capacity: 10)
        let first = Evidence(sent: StoreInstant(nanoseconds: 100), received: StoreInstant(nanoseconds: 200))
        _ = try state.apply(Self.details(Self.start), for: "u", evidence: first, source: .server(likeOf: nil)) { _ in false }

        let applied = try state.apply(Self.details(expected.answer), for: "u", evidence: expected.age.evidence, source: expected.source) { _ in false }

        #expect(applied.changedMoments == expected.changedMoments)
        #expect(applied.changedEntries == expected.changedEntries)
        #expect(applied.needsConvergence == expected.needsConvergence)
        #expect(applied.batch.moments.keys.sorted() == expected.writtenMoments)
        #expect(applied.batch.timelines.keys.sorted() == (expected.writesTimeline ? ["u"] : []))
        #expect(applied.timeline?.reason == expected.timelineChange)
        let shown = try #require(state.displayedTimeline("u"))
        #expect(Dictionary(uniqueKeysWithValues: shown.moments.map { ($0.id, ($0.likes ?? []).map(\.id)) }) == expected.likers)
        #expect(Dictionary(uniqueKeysWithValues: shown.moments.map { ($0.id, $0.isLiked ?? false) }) == expected.isLiked)
    }

    @Test func anAnswerListingAMomentTwiceIsRefusedAndAppliesNothing() throws {
        let state = StoreState(capacity: 10)
        let first = Evidence(sent: StoreInstant(nanoseconds: 100), received: StoreInstant(nanoseconds: 200))
        _ = try state.apply(Self.details(Self.start), for: "u", evidence: first, source: .server(likeOf: nil)) { _ in false }

        #expect(throws: MomentsStoreError.self) {
            try state.apply(Self.details([("m3", [], true), ("m3", [], true)]), for: "u", evidence: Age.newer.evidence, source: .server(likeOf: nil)) { _ in false }
        }
        #expect(state.displayedTimeline("u")?.moments.map(\.id) == ["m1", "m2"])
        #expect(state.records["m3"] == nil)
    }

    @Test func aDifferenceALikeInFlightExplainsIsDeferredToThatLike() throws {
        let state = StoreState(capacity: 10)
        let first = Evidence(sent: StoreInstant(nanoseconds: 100), received: StoreInstant(nanoseconds: 200))
        _ = try state.apply(Self.details(Self.start), for: "u", evidence: first, source: .server(likeOf: nil)) { _ in false }

        let applied = try state.apply(Self.details([("m1", ["y"], false), ("m2", ["x"], false)]), for: "u", evidence: Age.overlapping.evidence,
                                      source: .server(likeOf: nil)) { $0 == LikeKey(userID: "y", momentID: "m1") }

        #expect(applied.deferredLikers == [LikeKey(userID: "y", momentID: "m1")])
        #expect(!applied.needsConvergence)
        #expect(applied.changedMoments.isEmpty)
    }

    struct PolicyCase: CustomTestStringConvertible, Sendable {
        let source: StoreState.Source
        let isServer: Bool
        let persists: Bool
        let settles: Bool
        let isShared: Bool
        let skims: Bool
        var testDescription: String { "\(source)" }
    }

    /// The table in ``AnswerPolicy``'s documentation.
    @Test(arguments: [
        PolicyCase(source: .server(likeOf: nil), isServer: true, persists: true, settles: true, isShared: false, skims: true),
        PolicyCase(source: .server(likeOf: "m1"), isServer: true, persists: true, settles: true, isShared: false, skims: true),
        PolicyCase(source: .cache, isServer: false, persists: true, settles: true, isShared: false, skims: true),
        PolicyCase(source: .persisted, isServer: false, persists: false, settles: false, isShared: false, skims: true),
        PolicyCase(source: .shared, isServer: false, persists: false, settles: true, isShared: true, skims: false),
    ])
    func eachSourceHasThePolicyItsTableGives(_ expected: PolicyCase) {
        let policy = AnswerPolicy(source: expected.source, hasMomentAges: false, hasDivergentMoments: false, likesAreExclusive: true)
        #expect(policy.isServer == expected.isServer)
        #expect(policy.persists == expected.persists)
        #expect(policy.settles == expected.settles)
        #expect(policy.isShared == expected.isShared)
        #expect(policy.skimsUnchanged == expected.skims)
        #expect(!policy.writesAgreement)
        // A server's answer is written as agreement where storage may differ, and then skims nothing.
        let shared = AnswerPolicy(source: expected.source, hasMomentAges: false, hasDivergentMoments: false, likesAreExclusive: false)
        #expect(shared.writesAgreement == expected.isServer)
        #expect(shared.skimsUnchanged == (expected.skims && !expected.isServer))
        #expect(!AnswerPolicy(source: expected.source, hasMomentAges: true, hasDivergentMoments: false, likesAreExclusive: true).skimsUnchanged)
    }

    static func details(_ moments: [(id: String, likers: [String], isLiked: Bool)]) -> MomentsDetails {
        let owner = UserDetails(id: "u", name: "U", avatar: "https://images.example.com/u.jpg", backgroundImage: "https://images.example.com/b.jpg")
        let author = Moment.MomentUserDetails(id: "a", name: "A", avatar: "https://images.example.com/a.jpg")
        return MomentsDetails(userDetails: owner, moments: moments.map { moment in
            Moment(id: moment.id, userDetails: author, type: .url, title: "t", url: "https://example.com", createdDate: "1700000000",
                   isLiked: moment.isLiked, likes: moment.likers.map { Moment.LikedUser(id: $0, avatar: "https://images.example.com/\($0).jpg") })
        })
    }
}
