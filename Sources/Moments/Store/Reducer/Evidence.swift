import Foundation

/// When the server may have computed a value the store holds: the store's clock for
/// ordering answers that arrive in any order.
///
/// A server computes an answer at some instant between the moment the request left and
/// the moment the answer was received. Of two answers, one is certainly newer than the
/// other only if it was sent after the other was received; otherwise their order is
/// unknown. A value of unknown age (served by a cache, or read from persistence) was
/// computed at some time before it was received, and is never certainly newer than
/// anything.
struct Evidence: Sendable, Hashable {
    /// The earliest instant the server may have computed the value; `nil` when it may
    /// be any time before ``received``.
    let sent: StoreInstant?
    /// When the store received (applied) it.
    let received: StoreInstant

    /// A value of unknown age, received now.
    static func ofUnknownAge(receivedAt received: StoreInstant) -> Evidence {
        Evidence(sent: nil, received: received)
    }

    /// Whether the server certainly computed this value after `other`.
    func isCertainlyNewer(than other: Evidence) -> Bool {
        guard let sent else { return false }
        return sent > other.received
    }

    /// Whether the server certainly computed this value before `other`.
    func isCertainlyOlder(than other: Evidence) -> Bool {
        other.isCertainlyNewer(than: self)
    }

    /// Whether the server certainly computed this value after the store received
    /// something at `instant`.
    func wasSent(after instant: StoreInstant) -> Bool {
        guard let sent else { return false }
        return sent > instant
    }

    /// The smallest evidence covering both: from the earlier of their earliest instants
    /// (unknown if either is) to the later of their receipts.
    func covering(_ other: Evidence) -> Evidence {
        Evidence(sent: sent.flatMap { mine in other.sent.map { min(mine, $0) } }, received: max(received, other.received))
    }

    /// The same on the wall clock, for other instances: the interval that certainly
    /// holds it, given one reading of both clocks (see ``ClockReading``).
    func confirmationInterval(reading: ClockReading) -> ConfirmationInterval {
        ConfirmationInterval(notBefore: sent.map(reading.earliestDate(at:)), notAfter: reading.latestDate(at: received))
    }

    /// Evidence for a value another instance confirmed within `interval` (on its wall
    /// clock, widened by its half of the skew tolerance): the range of this store's
    /// clock the interval certainly lies in, given the reading (whose margin is this
    /// store's half), received no later than the reading.
    static func shared(_ interval: ConfirmationInterval?, reading: ClockReading) -> Evidence {
        let now = reading.after
        guard let interval, let notBefore = interval.notBefore else { return .ofUnknownAge(receivedAt: now) }
        let sent = min(reading.earliestInstant(at: notBefore), now)
        let received = max(sent, min(reading.latestInstant(at: interval.notAfter), now))
        return Evidence(sent: sent, received: received)
    }
}

extension Evidence: CustomStringConvertible {
    /// `sent…received` in microseconds of the store's clock, for debug records.
    var description: String {
        "\(sent.map { String($0.nanoseconds / 1_000) } ?? "?")…\(received.nanoseconds / 1_000)"
    }
}
