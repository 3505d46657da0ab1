public import Foundation

/// Where a ``MomentsStore`` learns of the confirmed changes other instances of a service
/// committed to storage they share, such as `PostgresPersistence` in `MomentsPostgres`
/// (PostgreSQL `LISTEN/NOTIFY`). Another bus (Redis, NATS) conforms the same way.
///
/// A bus must:
/// - deliver only changes that committed, and never the receiving instance's own
///   (no echo loops), except a moment the storage found contested (below), which goes
///   to every instance, the writer included;
/// - mark a moment or a timeline contested when a save replaced a different value of it
///   whose order against the saved one cannot be known (their confirmation intervals
///   overlap): two instances confirmed concurrent changes (likes of one user through two
///   instances, say), and only the server knows which came last;
/// - carry, with each moment and timeline, when the server confirmed it
///   (``ConfirmationInterval``), so receivers can order it against their own answers;
/// - report ``SharedChangeEvent/interrupted`` whenever events may have been lost (a
///   lost connection, once it is back), after which receivers resynchronise through
///   ``committedState(momentIDs:userIDs:)``.
public protocol MomentsChangeBus: Sendable {
    /// The events from now on, until the stream is dropped or its task cancelled.
    func sharedChanges() -> AsyncStream<SharedChangeEvent>

    /// What the shared storage holds now for `momentIDs` and the timelines of `userIDs`
    /// (those it has; others are left out).
    func committedState(momentIDs: [String], userIDs: [String]) async throws -> SharedCommit
}

/// One event of a ``MomentsChangeBus``.
public enum SharedChangeEvent: Sendable {
    /// Another instance committed these confirmed moments and timelines.
    case committed(SharedCommit)
    /// Events may have been lost (the connection was down); the connection is back.
    case interrupted
}

/// Confirmed state that another instance committed.
///
/// Every moment a timeline lists is also among ``moments``, with the age of its own
/// row: a timeline's confirmation dates its list, not the moments in it (which other
/// saves may have written before or after). A listed moment missing from ``moments`` is
/// taken as of unknown age.
public struct SharedCommit: Sendable, Hashable {
    /// Moments, each with `isLiked` `nil` (it belongs to each timeline).
    public var moments: [CommittedMoment]
    /// Timelines, assembled as their owners see them.
    public var timelines: [CommittedTimeline]
    /// Users whose timelines another instance removed: a receiver forgets them.
    public var removedUserIDs: [String]
    /// Another instance removed every timeline and moment: a receiver forgets all it holds.
    public var removedEverything: Bool

    /// A commit of `moments` and `timelines`, and of the removal of `removedUserIDs`'
    /// timelines (or of everything).
    public init(moments: [CommittedMoment] = [], timelines: [CommittedTimeline] = [], removedUserIDs: [String] = [], removedEverything: Bool = false) {
        self.moments = moments
        self.timelines = timelines
        self.removedUserIDs = removedUserIDs
        self.removedEverything = removedEverything
    }
}

/// A moment as it was committed, and when the server confirmed it.
public struct CommittedMoment: Sendable, Hashable {
    /// The moment (`isLiked` `nil`).
    public var moment: Moment
    /// When the server computed it; `nil` if unknown (of unknown age).
    public var confirmedWithin: ConfirmationInterval?
    /// Whether the save replaced a different value of unknown order against this one:
    /// every instance holding the moment asks the server again.
    public var isContested: Bool

    /// `moment`, confirmed within `interval`, contested or not.
    public init(moment: Moment, confirmedWithin interval: ConfirmationInterval?, isContested: Bool = false) {
        self.moment = moment
        self.confirmedWithin = interval
        self.isContested = isContested
    }
}

/// A user's timeline as it was committed, and when the server confirmed its list.
public struct CommittedTimeline: Sendable, Hashable {
    /// The owner.
    public var userID: String
    /// The timeline as its owner sees it.
    public var details: MomentsDetails
    /// When the server computed the list, the owner's details and the owner's `isLiked`
    /// of each moment (not the moments: see ``SharedCommit``); `nil` if unknown.
    public var confirmedWithin: ConfirmationInterval?
    /// Whether the save replaced a different value of unknown order against this one:
    /// every instance asks the server for the timeline again.
    public var isContested: Bool

    /// `userID`'s timeline `details`, confirmed within `interval`, contested or not.
    public init(userID: String, details: MomentsDetails, confirmedWithin interval: ConfirmationInterval?, isContested: Bool = false) {
        self.userID = userID
        self.details = details
        self.confirmedWithin = interval
        self.isContested = isContested
    }
}

/// When the server computed a value, on the wall clock: no earlier than ``notBefore``
/// (when the request that fetched it left) and no later than ``notAfter`` (when its
/// answer arrived).
///
/// Instances compare intervals from different machines, so their clocks must agree to
/// within ``MomentsStore/Configuration-swift.struct/clockSkewTolerance``; a writer
/// widens every interval by half of it and a receiver by the other half, so a value
/// whose order is in doubt is refetched, never guessed, by an instance and by storage
/// comparing two instances' intervals alike.
public struct ConfirmationInterval: Sendable, Hashable, Codable {
    /// The earliest the server may have computed the value; `nil` if unknown.
    public var notBefore: Date?
    /// The latest it may have.
    public var notAfter: Date

    /// An interval from `notBefore` (`nil`: unknown) to `notAfter`.
    public init(notBefore: Date?, notAfter: Date) {
        self.notBefore = notBefore
        self.notAfter = notAfter
    }

    /// Storage's ordering rule: whether a value computed within `incoming` replaces a
    /// stored one computed within `stored`. A value of unknown age (`nil`) replaces only
    /// another of unknown age; a confirmed value replaces any value the server did not
    /// certainly compute after it.
    public static func replaces(_ incoming: ConfirmationInterval?, _ stored: ConfirmationInterval?) -> Bool {
        guard let incoming else { return stored == nil }
        guard let stored, let storedStart = stored.notBefore else { return true }
        return storedStart <= incoming.notAfter
    }

    /// Storage's contest rule: whether a value computed within `incoming` that replaces
    /// one computed within `stored` leaves their order unknown, so only the server can
    /// settle it. Neither was certainly computed before the other: an incoming value of
    /// unknown start may be older than any; a stored value of unknown age never
    /// contests.
    public static func overlaps(_ stored: ConfirmationInterval?, _ incoming: ConfirmationInterval?) -> Bool {
        guard let stored else { return false }
        guard let start = incoming?.notBefore else { return true }
        return stored.notAfter >= start
    }

    /// The interval in whole microseconds since 1970, as databases store it.
    package var microseconds: (notBefore: Int64?, notAfter: Int64) {
        (notBefore.map(Self.microseconds), Self.microseconds(notAfter))
    }

    /// The interval stored as ``microseconds``; `nil` when `notAfter` is.
    package init?(microsecondsNotBefore notBefore: Int64?, notAfter: Int64?) {
        guard let notAfter else { return nil }
        self.init(notBefore: notBefore.map(Self.date), notAfter: Self.date(notAfter))
    }

    /// `date` in whole microseconds since 1970, as databases store it.
    package static func microseconds(_ date: Date) -> Int64 { Int64((date.timeIntervalSince1970 * 1e6).rounded()) }
    /// The date stored as `microseconds` since 1970.
    package static func date(_ microseconds: Int64) -> Date { Date(timeIntervalSince1970: Double(microseconds) / 1e6) }

    /// The smallest interval holding both (what a merged write may hold).
    public func union(_ other: ConfirmationInterval) -> ConfirmationInterval {
        let earliest: Date? = if let notBefore, let otherStart = other.notBefore { min(notBefore, otherStart) } else { nil }
        return ConfirmationInterval(notBefore: earliest, notAfter: max(notAfter, other.notAfter))
    }
}
