import Foundation
import Moments

/// What one commit changed, as `change_log` keeps it for the other connections to the
/// file: the rows written, those contested, the timelines removed.
struct SQLiteChange: Sendable {
    var sequence: Int64 = 0
    /// The persistence instance that wrote it.
    var writer: String
    var momentIDs: [String] = []
    var userIDs: [String] = []
    /// Moments whose save replaced a different value of unknown order, or whose value
    /// a kept like's answer changed: every instance asks the server again.
    var contestedMomentIDs: [String] = []
    /// Timelines whose save replaced a different owner, list or `isLiked` of unknown
    /// order: every instance asks the server again.
    var contestedUserIDs: [String] = []
    var removedUserIDs: [String] = []
    var removedEverything = false

    var isEmpty: Bool { momentIDs.isEmpty && userIDs.isEmpty && removedUserIDs.isEmpty && !removedEverything }
}

extension SQLitePersistence {
    /// How many commits `change_log` keeps: a connection that falls further behind is
    /// told events were lost (``SharedChangeEvent/interrupted``) and resynchronises.
    static let retainedChanges: Int64 = 10_000

    /// Appends `change` to the log, inside the commit's transaction, and forgets the
    /// oldest beyond ``retainedChanges``.
    func appendChange(_ change: SQLiteChange) throws {
        guard !change.isEmpty else { return }
        let insert = try connection.statement("""
            INSERT INTO change_log (writer, moment_ids, user_ids, contested_moment_ids, removed_user_ids, removed_everything, contested_user_ids)
            VALUES (?, ?, ?, ?, ?, ?, ?)
            """)
        insert.bind(change.writer, at: 1)
        insert.bind(StringListCoding.encode(change.momentIDs), at: 2)
        insert.bind(StringListCoding.encode(change.userIDs), at: 3)
        insert.bind(StringListCoding.encode(change.contestedMomentIDs), at: 4)
        insert.bind(StringListCoding.encode(change.removedUserIDs), at: 5)
        insert.bind(Int64(change.removedEverything ? 1 : 0), at: 6)
        insert.bind(StringListCoding.encode(change.contestedUserIDs), at: 7)
        try insert.run()
        // Bound as a number, so the delete is a range of the primary key (a function of
        // the connection in the condition made it a scan of the whole log, every commit).
        // Pruned every hundred commits: one statement less for most.
        let sequence = connection.lastInsertedRowID
        guard sequence > Self.retainedChanges, sequence % 100 == 0 else { return }
        let prune = try connection.statement("DELETE FROM change_log WHERE seq <= ?")
        prune.bind(sequence - Self.retainedChanges, at: 1)
        try prune.run()
    }

    /// The sequence of the latest change logged, 0 before the first.
    func latestChangeSequence() throws -> Int64 {
        let statement = try connection.statement("SELECT coalesce(max(seq), 0) FROM change_log")
        defer { statement.reset() }
        _ = try statement.step()
        return statement.int(at: 0)
    }

    /// The changes logged after `sequence`, oldest first.
    func changes(after sequence: Int64) throws -> [SQLiteChange] {
        let statement = try connection.statement("""
            SELECT seq, writer, moment_ids, user_ids, contested_moment_ids, removed_user_ids, removed_everything, contested_user_ids
            FROM change_log WHERE seq > ? ORDER BY seq
            """)
        defer { statement.reset() }
        statement.bind(sequence, at: 1)
        var changes: [SQLiteChange] = []
        while try statement.step() {
            func list(_ column: Int32) throws -> [String] {
                guard let text = statement.validText(at: column), let list = try? StringListCoding.decode(text) else {
                    throw PersistenceError(code: .corruptedData, location: path, reason: "the change log has a list that cannot be read")
                }
                return list
            }
            changes.append(SQLiteChange(
                sequence: statement.int(at: 0), writer: statement.text(at: 1), momentIDs: try list(2), userIDs: try list(3),
                contestedMomentIDs: try list(4), contestedUserIDs: try list(7), removedUserIDs: try list(5),
                removedEverything: statement.int(at: 6) != 0
            ))
        }
        return changes
    }
}
