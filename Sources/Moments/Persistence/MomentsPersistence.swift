/// Where timelines are kept between runs, normalized as the store keeps them: one record
/// per moment id, shared by every timeline that holds it, and per user a timeline of
/// the user's details and the ids of their moments, in order.
///
/// Implementations: ``InMemoryPersistence``, ``JSONFilePersistence``, and
/// `SQLitePersistence` in `MomentsSQLite`. Every implementation must:
/// - apply a ``PersistenceBatch`` all or nothing, so a crash leaves the state before the
///   batch or after it, never a part of it (``JSONFilePersistence`` writes one file per
///   user, each all or nothing: see its documentation);
/// - show a saved moment in every timeline that holds it;
/// - give a moment in user *u*'s timeline the `isLiked` saved with *u*'s timeline entry
///   (the server's answer for that viewer), never one derived from `likes`: what
///   `isLiked` means is the server's to say, and a save of the moment alone leaves it;
/// - keep a moment while at least one timeline holds it, and only then;
/// - keep users apart: one user's damaged data never hides another's;
/// - report every failure as ``PersistenceError``.
public protocol MomentsPersistence: Sendable {
    /// The timeline saved for `userID`, assembled from its moment records, or `nil`.
    func load(userID: String) async throws -> MomentsDetails?

    /// Saves `batch` all or nothing: its timelines replace those users' timelines, and
    /// its moments replace those moments wherever they stand.
    ///
    /// - Throws: ``PersistenceError/Code-swift.struct/invalidInput`` if a timeline lists
    ///   a moment id twice or lists a moment that neither the batch nor the storage holds.
    func save(_ batch: PersistenceBatch) async throws

    /// The ids of the users whose saved timelines hold the moment `momentID`.
    func userIDs(holding momentID: String) async throws -> [String]

    /// Removes `userID`'s timeline, if any, and the moments no other timeline holds.
    func remove(userID: String) async throws

    /// The ids of every user with a saved timeline, in no particular order.
    func userIDs() async throws -> [String]

    /// Removes every timeline and moment.
    func removeAll() async throws
    /// Throws unless a save can be expected to succeed now (the store is writable),
    /// so a caller can refuse a side effect it could not record.
    func checkWritable() async throws

    /// Whether ``save(_:)`` keeps ``PersistenceBatch/confirmedWithin``: storage that
    /// several instances share, which order each other's writes by it. When `false`,
    /// ``MomentsStore`` leaves it `nil` rather than compute what no one reads.
    ///
    /// The default is `false`.
    var keepsConfirmationIntervals: Bool { get }

    /// Releases what the persistence holds open (connections, files, locks, listeners);
    /// a persistence that released something throws
    /// ``PersistenceError/Code-swift.struct/closed`` from every later call.
    /// ``MomentsStore/shutdown(gracePeriod:)`` calls it once its last write has ended.
    /// Idempotent.
    ///
    /// The default does nothing: for a persistence that holds nothing open between
    /// calls (``InMemoryPersistence``, ``JSONFilePersistence``).
    func close() async
}

extension MomentsPersistence {
    /// The default: `false`, the interval is not kept.
    public var keepsConfirmationIntervals: Bool { false }

    /// The default: nothing to release.
    public func close() async {}

    /// Saves `details` as `userID`'s timeline, with each of its moments.
    public func save(_ details: MomentsDetails, for userID: String) async throws {
        try await save(PersistenceBatch(timeline: details, for: userID))
    }
}

/// What one step of the store writes, saved all or nothing.
///
/// For example, a confirmed like writes one moment:
/// ```swift
/// try await persistence.save(PersistenceBatch(moments: [likedMoment]))
/// ```
public struct PersistenceBatch: Sendable, Hashable {
    /// Timelines to replace, by user id.
    public var timelines: [String: StoredTimeline]
    /// Moments to replace wherever they stand, by id. Their `isLiked` is ignored: it
    /// belongs to each timeline entry (see ``MomentsPersistence``).
    public var moments: [String: Moment]
    /// When the server computed what the batch holds, if the store knows (an answer
    /// from the server); `nil` for values of unknown age. Storage shared between
    /// instances keeps it for ordering (see ``MomentsChangeBus``); others may ignore it.
    public var confirmedWithin: ConfirmationInterval?
    /// The answers to likes the batch's moments reflect, oldest first. Storage shared
    /// between instances keeps each with its moment until a write the server certainly
    /// computed after it (see ``LikeConfirmation``); others may ignore them. Each one's
    /// moment is among ``moments``, and ``confirmedWithin`` covers its interval.
    public var likeConfirmations: [LikeConfirmation]

    /// A batch of `timelines` and `moments`, confirmed within `interval` if known.
    public init(
        timelines: [String: StoredTimeline] = [:], moments: [Moment] = [], confirmedWithin interval: ConfirmationInterval? = nil,
        likeConfirmations: [LikeConfirmation] = []
    ) {
        self.timelines = timelines
        self.moments = moments.isEmpty ? [:] : Dictionary(moments.map { ($0.id, $0) }, uniquingKeysWith: { _, last in last })
        self.confirmedWithin = interval
        self.likeConfirmations = likeConfirmations
    }

    /// A batch replacing `userID`'s timeline with `details` and saving each of its moments.
    public init(timeline details: MomentsDetails, for userID: String) {
        self.init(timelines: [userID: StoredTimeline(details)], moments: details.moments)
    }

    /// Whether the batch writes nothing.
    public var isEmpty: Bool { timelines.isEmpty && moments.isEmpty }

    /// Adds `later`'s writes; where both write the same timeline or moment, `later` wins.
    /// The confirmation interval becomes the union of both, or unknown if either is; an
    /// empty `later` leaves it as it was.
    public mutating func merge(_ later: PersistenceBatch) {
        likeConfirmations += later.likeConfirmations
        guard !later.isEmpty else { return }
        let wasEmpty = isEmpty
        timelines.merge(later.timelines) { _, last in last }
        moments.merge(later.moments) { _, last in last }
        if wasEmpty {
            confirmedWithin = later.confirmedWithin
        } else if let interval = confirmedWithin, let other = later.confirmedWithin {
            confirmedWithin = interval.union(other)
        } else {
            confirmedWithin = nil
        }
    }
}

/// A user's timeline as persistence keeps it: the user's details and the ids of their
/// moments in order, each with the `isLiked` the server gave this user.
public struct StoredTimeline: Sendable, Hashable {
    /// One position of the timeline.
    public struct Entry: Sendable, Hashable {
        /// The moment's id.
        public var momentID: String
        /// `isLiked` of the moment as the server answered it to the timeline's owner.
        public var isLiked: Bool?

        /// An entry for `momentID`.
        public init(momentID: String, isLiked: Bool? = nil) {
            self.momentID = momentID
            self.isLiked = isLiked
        }
    }

    /// The owner of the timeline.
    public var userDetails: UserDetails
    /// The moments, in the server's order.
    public var entries: [Entry]

    /// A timeline of `entries`.
    public init(userDetails: UserDetails, entries: [Entry]) {
        self.userDetails = userDetails
        self.entries = entries
    }

    /// The timeline of `details`.
    public init(_ details: MomentsDetails) {
        self.init(userDetails: details.userDetails,
                  entries: details.moments.map { Entry(momentID: $0.id, isLiked: $0.isLiked) })
    }

    /// The first moment id listed twice, if any.
    public var duplicateMomentID: String? {
        var seen = Set<String>()
        seen.reserveCapacity(entries.count)
        for entry in entries where !seen.insert(entry.momentID).inserted { return entry.momentID }
        return nil
    }

    /// The timeline as `userID` sees it, assembled from `moment(id)`; `nil` if a moment is missing.
    public func assemble(for userID: String, moment: (String) throws -> Moment?) rethrows -> MomentsDetails? {
        var moments: [Moment] = []
        moments.reserveCapacity(entries.count)
        for entry in entries {
            guard let record = try moment(entry.momentID) else { return nil }
            moments.append(record.withIsLiked(entry.isLiked))
        }
        return MomentsDetails(userDetails: userDetails, moments: moments)
    }
}

extension Moment {
    /// This moment with `isLiked` set to `isLiked` (a timeline entry's, for its owner).
    public func withIsLiked(_ isLiked: Bool?) -> Moment {
        var moment = self
        moment.isLiked = isLiked
        return moment
    }
}
