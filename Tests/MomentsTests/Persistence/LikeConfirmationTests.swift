import Foundation
import Moments
import MomentsTestSupport
import Testing

/// The rule shared storage keeps for the answers to likes (``LikeConfirmation``): each
/// is the authority for its liker's register until a write certainly computed after it.
@Suite struct LikeConfirmationTests {
    private static func interval(_ from: Double?, _ to: Double) -> ConfirmationInterval {
        ConfirmationInterval(notBefore: from.map { Date(timeIntervalSince1970: $0) }, notAfter: Date(timeIntervalSince1970: to))
    }

    private static func answer(_ liker: String, _ isLiked: Bool, _ from: Double?, _ to: Double) -> LikeConfirmation {
        LikeConfirmation(momentID: "m", liker: Moment.LikedUser(id: liker, avatar: "https://img/\(liker).jpg"),
                         isLiked: isLiked, confirmedWithin: interval(from, to))
    }

    private static func moment(likedBy likers: [String]) -> Moment {
        var moment = SampleTimelines.moment(id: "m")
        moment.likes = likers.map { Moment.LikedUser(id: $0, avatar: "https://img/\($0).jpg") }
        return moment
    }

    @Test func onlyAWriteCertainlyComputedAfterTheAnswerSettlesIt() {
        let like = Self.answer("b", true, 10, 12)
        #expect(like.isSettled(by: Self.interval(12.5, 13)))
        #expect(!like.isSettled(by: Self.interval(12, 13)), "a write starting as the answer arrived may have been computed before it")
        #expect(!like.isSettled(by: Self.interval(5, 20)))
        #expect(!like.isSettled(by: Self.interval(nil, 30)), "a write of unknown start is never certainly newer")
        #expect(!like.isSettled(by: nil))
    }

    @Test func anOverlappingOlderValueKeepsTheLikersRegister() {
        let like = Self.answer("b", true, 10, 12)
        let unlike = Self.answer("c", false, 10, 12)
        let kept = LikeConfirmation.kept(stored: [like, unlike], arriving: [], writtenWithin: Self.interval(9, 11))
        #expect(kept == [like, unlike] || kept == [unlike, like])
        let older = Self.moment(likedBy: ["a", "c"])
        #expect(LikeConfirmation.applying(kept, to: older).likes?.map(\.id) == ["a", "b"])
    }

    @Test func aNewerWriteDropsTheAnswerAndIsTakenAsItIs() {
        let like = Self.answer("b", true, 10, 12)
        let kept = LikeConfirmation.kept(stored: [like], arriving: [], writtenWithin: Self.interval(13, 14))
        #expect(kept.isEmpty)
        let newer = Self.moment(likedBy: ["a"])
        #expect(LikeConfirmation.applying(kept, to: newer) == newer)
    }

    @Test func aLikersArrivingAnswerReplacesTheirStoredOneUnlessThatIsCertainlyNewer() {
        let like = Self.answer("b", true, 10, 12)
        let overlappingUnlike = Self.answer("b", false, 11, 14)
        #expect(LikeConfirmation.kept(stored: [like], arriving: [overlappingUnlike], writtenWithin: Self.interval(11, 14)) == [overlappingUnlike])
        let laterUnlike = Self.answer("b", false, 20, 21)
        let staleLike = Self.answer("b", true, 15, 16)
        #expect(LikeConfirmation.kept(stored: [laterUnlike], arriving: [staleLike], writtenWithin: Self.interval(15, 16)) == [laterUnlike])
    }

    @Test func aMomentWithoutLikesIsLeftAsItIs() {
        var moment = Self.moment(likedBy: [])
        moment.likes = nil
        #expect(LikeConfirmation.applying([Self.answer("b", true, 10, 12)], to: moment) == moment)
    }
}
