import Foundation
import MomentsSupport

/// An instant on the store's clock: nanoseconds of `ContinuousClock` since the process
/// first asked, in a plain integer.
///
/// `ContinuousClock.Instant` is a resilient type: copying and comparing it goes through
/// the runtime, which dominated the store's cost per moment. Instants are converted once
/// per answer; every comparison after that is an integer comparison.
struct StoreInstant: Comparable, Hashable, Sendable {
    private static let origin = ContinuousClock.now

    let nanoseconds: Int64

    init(_ instant: ContinuousClock.Instant) {
        nanoseconds = (instant - Self.origin).nanoseconds
    }

    /// The instant `nanoseconds` after the store's clock began (for tests that place
    /// answers on the clock by hand).
    init(nanoseconds: Int64) {
        self.nanoseconds = nanoseconds
    }

    static func < (lhs: StoreInstant, rhs: StoreInstant) -> Bool {
        lhs.nanoseconds < rhs.nanoseconds
    }
}
