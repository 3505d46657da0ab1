@testable import Moments
import MomentsTestSupport
import Testing

/// ``LikerView`` compares two views of a moment without building them: it must agree
/// with comparing the views ``StoreState/view(_:isLiked:by:)`` builds, for every value,
/// `isLiked` and like in flight, duplicated likers and unknown likes included.
@Suite struct LikerViewTests {
    /// A small world, so that random pairs often agree: three likers with two avatars
    /// each, lists of up to four entries (a liker may appear twice, as a careless server
    /// might send), two titles.
    struct Draw {
        var random: SeededGenerator

        mutating func liker() -> Moment.LikedUser {
            let id = ["u0", "u1", "u2"].randomElement(using: &random) ?? "u0"
            return Moment.LikedUser(id: id, avatar: Bool.random(using: &random) ? "a" : "b")
        }

        mutating func value() -> Moment {
            let likes: [Moment.LikedUser]? = Int.random(in: 0..<5, using: &random) == 0
                ? nil : (0..<Int.random(in: 0...4, using: &random)).map { _ in liker() }
            return Moment(id: "m", userDetails: .init(id: "author", name: "Author", avatar: "x"), type: .url,
                          title: Int.random(in: 0..<4, using: &random) == 0 ? "other" : "title", createdDate: "1",
                          likes: likes)
        }

        mutating func isLiked() -> Bool? { [nil, false, true].randomElement(using: &random) ?? nil }

        mutating func intent(for userID: String) -> LikeIntent? {
            guard Bool.random(using: &random) else { return nil }
            return LikeIntent(isLiked: Bool.random(using: &random),
                              liker: .init(id: userID, avatar: Bool.random(using: &random) ? "a" : "b"), generation: 1)
        }
    }

    /// The view as the store builds it.
    func built(_ value: Moment, isLiked: Bool?, intent: LikeIntent?) -> Moment {
        let record = MomentRecord(value: value, evidence: .ofUnknownAge(receivedAt: StoreInstant(nanoseconds: 0)))
        if let intent { record.intents = [intent] }
        return StoreState(capacity: 1).view(record, isLiked: isLiked, by: "u0")
    }

    @Test func agreesWithComparingBuiltViews() {
        let seed = UInt64.random(in: 0..<UInt64.max)
        var draw = Draw(random: SeededGenerator(seed: seed))
        var equalPairs = 0
        for round in 0..<20_000 {
            let left = (value: draw.value(), isLiked: draw.isLiked(), intent: draw.intent(for: "u0"))
            // Half the pairs share the value, so that the intent decides.
            let right = (value: Bool.random(using: &draw.random) ? left.value : draw.value(), isLiked: draw.isLiked(),
                         intent: draw.intent(for: "u0"))
            let expected = built(left.value, isLiked: left.isLiked, intent: left.intent)
                == built(right.value, isLiked: right.isLiked, intent: right.intent)
            let compared = LikerView(value: left.value, isLiked: left.isLiked, intent: left.intent)
                == LikerView(value: right.value, isLiked: right.isLiked, intent: right.intent)
            if expected { equalPairs += 1 }
            guard compared == expected else {
                Issue.record("seed \(seed), round \(round): \(left) against \(right): views equal \(expected), compared \(compared)")
                return
            }
        }
        // The draw must reach both answers often, or the agreement says little.
        #expect(equalPairs > 1_000 && equalPairs < 19_000, "seed \(seed): \(equalPairs) of 20,000 pairs equal")
    }

    @Test func anUnlikeRemovesTheFirstEntryOfItsLikerOnly() {
        let twice = Moment(id: "m", userDetails: .init(id: "a", name: "A", avatar: "x"), type: .url, createdDate: "1",
                           likes: [.init(id: "u0", avatar: "a"), .init(id: "u0", avatar: "a")])
        let once = Moment(id: "m", userDetails: .init(id: "a", name: "A", avatar: "x"), type: .url, createdDate: "1",
                          likes: [.init(id: "u0", avatar: "a")])
        let unlike = LikeIntent(isLiked: false, liker: .init(id: "u0", avatar: "a"), generation: 1)
        let like = LikeIntent(isLiked: true, liker: .init(id: "u0", avatar: "a"), generation: 1)
        // Unliked, the list that named u0 twice still names them once: as liked, with
        // isLiked false from the like in flight.
        #expect(LikerView(value: twice, isLiked: nil, intent: unlike) == LikerView(value: once, isLiked: nil, intent: LikeIntent(isLiked: false, liker: .init(id: "u9", avatar: "a"), generation: 1)))
        #expect(LikerView(value: twice, isLiked: nil, intent: unlike) != LikerView(value: once, isLiked: nil, intent: unlike))
        #expect(LikerView(value: once, isLiked: nil, intent: like) == LikerView(value: once, isLiked: true, intent: nil))
    }
}
