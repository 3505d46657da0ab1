/// What an answer may do to the store, decided once by where it came from
/// (``StoreState/Source``) and what the store knows: the rules
/// ``StoreState/apply(_:for:evidence:source:momentEvidence:isLikeInFlight:)`` follows,
/// named, instead of flags computed along the way.
///
/// | source                 | server | persists | settles | shared | liked moment | skims unchanged               |
/// |------------------------|--------|----------|---------|--------|--------------|-------------------------------|
/// | `.server(likeOf: nil)` | yes    | yes      | yes     | no     | none         | unless writing agreement      |
/// | `.server(likeOf: id)`  | yes    | yes      | yes     | no     | `id`         | unless writing agreement; never `id` |
/// | `.cache`               | no     | yes      | yes     | no     | none         | yes                           |
/// | `.persisted`           | no     | no       | no      | no     | none         | yes                           |
/// | `.shared`              | no     | no       | yes     | yes    | none         | no                            |
///
/// An answer whose moments carry ages of their own (`momentEvidence`) never skims.
struct AnswerPolicy: Equatable {
    /// It is the server's answer (to a refresh, or to a like).
    let isServer: Bool
    /// Its changes are written to persistence. Not for what was read from this
    /// store's persistence (already there), nor for another instance's committed
    /// value (that instance wrote it).
    let persists: Bool
    /// A disagreement it reveals is the server's to settle (a refetch). Not for what
    /// this store's own persistence held: the server's next answer replaces it anyway.
    let settles: Bool
    /// It is another instance's committed value: merged, and noted against this
    /// store's value (a difference makes the moment or timeline divergent).
    let isShared: Bool
    /// The moment whose like, by the timeline's owner, this answer answers: that
    /// moment's register of the owner is pinned to the answer.
    let likedMomentID: String?
    /// A server's answer is written even where it changes nothing in memory, because
    /// shared storage may hold another value: some moment is divergent, or other
    /// instances write the same likes (`likesAreExclusive` false).
    let writesAgreement: Bool
    /// Moments the answer does not change need only their evidence advanced (the fast
    /// path): the answer has one age, and is neither another instance's value nor
    /// written as agreement.
    let skimsUnchanged: Bool

    init(source: StoreState.Source, hasMomentAges: Bool, hasDivergentMoments: Bool, likesAreExclusive: Bool) {
        persists = source != .persisted && source != .shared
        settles = source != .persisted
        isShared = source == .shared
        if case .server(let momentID) = source {
            isServer = true
            likedMomentID = momentID
            writesAgreement = hasDivergentMoments || !likesAreExclusive
        } else {
            isServer = false
            likedMomentID = nil
            writesAgreement = false
        }
        skimsUnchanged = !hasMomentAges && !isShared && !writesAgreement
    }
}
