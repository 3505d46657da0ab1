/// Where timelines are kept between runs: one ``MomentsDetails`` per user id.
///
/// Implementations: ``InMemoryPersistence``, ``JSONFilePersistence``, and
/// `SQLitePersistence` in `MomentsSQLite`. A PostgreSQL or Redis implementation can take
/// their place. Every implementation must keep a save all-or-nothing (a crash leaves the
/// old or the new timeline, never a mix), keep users apart (one user's corrupt data never
/// hides another's), and report failures as ``PersistenceError``.
public protocol MomentsPersistence: Sendable {
    /// The timeline saved for `userID`, or `nil` if there is none.
    func load(userID: String) async throws -> MomentsDetails?

    /// Saves `details` as `userID`'s timeline, replacing any earlier one.
    func save(_ details: MomentsDetails, for userID: String) async throws

    /// Replaces the moment with `moment.id` in `userID`'s saved timeline, if it holds one;
    /// returns whether it did. Implementations should make this cheap: a like must not
    /// rewrite a whole timeline where the storage allows it.
    @discardableResult
    func saveMoment(_ moment: Moment, for userID: String) async throws -> Bool

    /// Removes `userID`'s timeline, if any.
    func remove(userID: String) async throws

    /// The ids of every user with a saved timeline, in no particular order.
    func userIDs() async throws -> [String]

    /// Removes every timeline.
    func removeAll() async throws
}
