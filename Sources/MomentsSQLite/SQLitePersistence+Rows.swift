import Moments
import MomentsCSQLite
import MomentsSupport
import Foundation

/// The rows of a timeline: written, read back, and orphans removed.
extension SQLitePersistence {
    func momentIDs(of userID: String) throws -> [String] {
        let statement = try connection.statement("SELECT moment_id FROM timeline_entry WHERE user_id = ?")
        defer { statement.reset() }
        statement.bind(userID, at: 1)
        var ids: [String] = []
        while try statement.step() { ids.append(statement.text(at: 0)) }
        return ids
    }

    func writeTimeline(
        _ timeline: StoredTimeline, for userID: String, batch: PersistenceBatch, confirmedWithin confirmed: ConfirmationInterval?, checksum: Int64
    ) throws {
        let exists = try connection.statement("SELECT 1 FROM moment WHERE id = ?")
        for entry in timeline.entries where batch.moments[entry.momentID] == nil {
            exists.bind(entry.momentID, at: 1)
            defer { exists.reset() }
            guard try exists.step() else { throw PersistenceError.missingMoment(entry.momentID, location: path, userID: userID) }
        }
        let owner = try connection.statement("""
            INSERT INTO timeline (user_id, owner_id, owner_name, owner_avatar, owner_background, checksum, confirmed_not_before, confirmed_not_after)
            VALUES (?, ?, ?, ?, ?, ?, ?, ?)
            ON CONFLICT (user_id) DO UPDATE SET owner_id = excluded.owner_id, owner_name = excluded.owner_name,
                owner_avatar = excluded.owner_avatar, owner_background = excluded.owner_background, checksum = excluded.checksum,
                confirmed_not_before = excluded.confirmed_not_before, confirmed_not_after = excluded.confirmed_not_after
            """)
        owner.bind(userID, at: 1)
        owner.bind(timeline.userDetails.id, at: 2)
        owner.bind(timeline.userDetails.name, at: 3)
        owner.bind(timeline.userDetails.avatar, at: 4)
        owner.bind(timeline.userDetails.backgroundImage, at: 5)
        owner.bind(checksum, at: 6)
        owner.bind(confirmed?.microseconds.notBefore, at: 7)
        owner.bind(confirmed?.microseconds.notAfter, at: 8)
        try owner.run()

        let clear = try connection.statement("DELETE FROM timeline_entry WHERE user_id = ?")
        clear.bind(userID, at: 1)
        try clear.run()
        let insert = try connection.statement("INSERT INTO timeline_entry (user_id, position, moment_id, is_liked) VALUES (?, ?, ?, ?)")
        for (position, entry) in timeline.entries.enumerated() {
            insert.bind(userID, at: 1)
            insert.bind(Int64(position), at: 2)
            insert.bind(entry.momentID, at: 3)
            insert.bind(entry.isLiked, at: 4)
            try insert.run()
        }
    }

    /// Deletes the moments among `ids` that no timeline holds any more.
    func removeOrphans(_ ids: Set<String>) throws {
        guard !ids.isEmpty else { return }
        let delete = try connection.statement(
            "DELETE FROM moment WHERE id = ?1 AND NOT EXISTS (SELECT 1 FROM timeline_entry WHERE moment_id = ?1)"
        )
        for id in ids {
            delete.bind(id, at: 1)
            try delete.run()
        }
    }

    func readTimeline(_ userID: String) throws -> MomentsDetails? {
        func damaged(_ what: String) -> PersistenceError {
            PersistenceError(code: .corruptedData, location: path, userID: userID, reason: "the stored timeline has \(what)")
        }
        let owner = try connection.statement(
            "SELECT owner_id, owner_name, owner_avatar, owner_background, checksum FROM timeline WHERE user_id = ?"
        )
        defer { owner.reset() }
        owner.bind(userID, at: 1)
        guard try owner.step() else { return nil }
        var fields: [String] = []
        for column in Int32(0)..<4 {
            guard let text = owner.validText(at: column) else { throw damaged("text that is not valid UTF-8") }
            fields.append(text)
        }
        let userDetails = UserDetails(id: fields[0], name: fields[1], avatar: fields[2], backgroundImage: fields[3])
        let storedChecksum = owner.int(at: 4)

        let rows = try connection.statement("""
            SELECT e.moment_id, e.is_liked, m.\(SQLiteRows.momentColumns.replacingOccurrences(of: ", ", with: ", m."))
            FROM timeline_entry e LEFT JOIN moment m ON m.id = e.moment_id
            WHERE e.user_id = ? ORDER BY e.position
            """)
        defer { rows.reset() }
        rows.bind(userID, at: 1)
        var entries: [StoredTimeline.Entry] = []
        var moments: [Moment] = []
        while try rows.step() {
            guard let momentID = rows.validText(at: 0) else { throw damaged("text that is not valid UTF-8") }
            let isLiked = rows.isNull(at: 1) ? nil : rows.int(at: 1) != 0
            entries.append(StoredTimeline.Entry(momentID: momentID, isLiked: isLiked))
            guard !rows.isNull(at: 2) else { throw damaged("moment \(momentID.debugDescription) listed but not stored") }
            let moment = try SQLiteRows.readMoment(rows, from: 2, damaged: damaged)
            guard moment.id == momentID else { throw damaged("a moment stored under another id") }
            moments.append(moment.withIsLiked(isLiked))
        }
        let timeline = StoredTimeline(userDetails: userDetails, entries: entries)
        guard storedChecksum == ContentChecksum.of(timeline, userID: userID) else {
            throw damaged("content that does not match its checksum")
        }
        return MomentsDetails(userDetails: userDetails, moments: moments)
    }

    /// Rows changed through this connection since it opened (for tests and diagnostics).
    var connectionTotalChanges: Int { connection.totalChanges }
}
