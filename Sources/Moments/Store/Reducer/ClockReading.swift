import Foundation
import MomentsSupport
import MomentsHTTP

/// One reading of both of the store's clocks, for converting instants of the store's
/// clock to the wall clock that instances sharing storage compare, and back.
///
/// Instances compare wall-clock intervals written on different machines, whose clocks
/// agree to within `clockSkewTolerance`. Each side of a comparison takes half: a
/// reading's wall clock may be off by ``margin`` (half the tolerance) either way, so two
/// intervals converted on two machines (by two instances, or one instance and the
/// storage comparing them) are in a certain order only if they are.
///
/// The two clocks cannot be read at one instant: the wall clock is read between two
/// readings of the store's clock, and a thread may be paused between them (for
/// milliseconds on a busy machine). A conversion therefore gives the range the answer
/// certainly lies in, not a guess inside it: an interval converted with a reading
/// holds the true one, however long the pause was. Without that, two instances (or
/// two answers of one instance) converted with readings paused for different times
/// could be put in the wrong order, and storage would keep the older value as
/// certainly newer. A reading is taken again (a few times at most) while its pause is
/// longer than ``preferredUncertainty``, so intervals stay tight.
struct ClockReading: Sendable {
    /// The store's clock just before the wall clock was read.
    let before: StoreInstant
    /// The wall clock.
    let date: Date
    /// The store's clock just after.
    let after: StoreInstant
    /// How far the wall clock may be from the one all instances share, in nanoseconds.
    let margin: Int64

    /// A pause between the two readings of the store's clock short enough to keep.
    static let preferredUncertainty: Int64 = 200_000

    /// Reads `clock`, whose wall clock may be `margin` either side of the one all
    /// instances share: the tightest of a few readings, the first whose pause is at most
    /// ``preferredUncertainty``.
    init(_ clock: any MomentsClock, margin: Duration = .zero) {
        let margin = margin.nanoseconds
        var best = Self(once: clock, margin: margin)
        var attempts = 1
        while best.after.nanoseconds - best.before.nanoseconds > Self.preferredUncertainty, attempts < 4 {
            let next = Self(once: clock, margin: margin)
            if next.after.nanoseconds - next.before.nanoseconds < best.after.nanoseconds - best.before.nanoseconds { best = next }
            attempts += 1
        }
        self = best
    }

    private init(once clock: any MomentsClock, margin: Int64) {
        before = StoreInstant(clock.now)
        date = clock.date
        after = StoreInstant(clock.now)
        self.margin = margin
    }

    /// A reading taken at one instant (for tests that place values on both clocks by hand).
    init(instant: StoreInstant, date: Date, margin: Int64 = 0) {
        before = instant
        self.date = date
        after = instant
        self.margin = margin
    }

    /// The earliest the wall clock may have shown at `instant`.
    func earliestDate(at instant: StoreInstant) -> Date {
        date.addingTimeInterval(Double(instant.nanoseconds - after.nanoseconds - margin) / 1e9)
    }

    /// The latest the wall clock may have shown at `instant`.
    func latestDate(at instant: StoreInstant) -> Date {
        date.addingTimeInterval(Double(instant.nanoseconds - before.nanoseconds + margin) / 1e9)
    }

    /// The earliest instant of the store's clock at which the wall clock may have shown `date`.
    func earliestInstant(at date: Date) -> StoreInstant {
        StoreInstant(nanoseconds: before.nanoseconds - margin + Self.nanoseconds(date.timeIntervalSince(self.date)))
    }

    /// The latest instant of the store's clock at which the wall clock may have shown `date`.
    func latestInstant(at date: Date) -> StoreInstant {
        StoreInstant(nanoseconds: after.nanoseconds + margin + Self.nanoseconds(date.timeIntervalSince(self.date)))
    }

    private static func nanoseconds(_ seconds: TimeInterval) -> Int64 {
        let value = (seconds * 1e9).rounded()
        // Dates centuries away (a corrupted row) saturate instead of trapping.
        guard value.isFinite else { return value < 0 ? Int64.min / 2 : Int64.max / 2 }
        return Int64(max(min(value, Double(Int64.max / 2)), Double(Int64.min / 2)))
    }
}
