import Foundation
import Moments

/// The ordering rule of shared storage, so several processes can write one file: a row
/// is replaced only by a value not certainly computed before it, and a moment keeps the
/// answers to likes (``LikeConfirmation``) until a write certainly computed after them.
extension SQLitePersistence {
    /// When a stored timeline was computed (`nil` inside: unknown), and its content's
    /// checksum; `nil` if none is stored.
    struct StoredAge {
        var interval: ConfirmationInterval?
        var checksum: Int64
    }

    func storedTimelineAge(of userID: String) throws -> StoredAge? {
        let statement = try connection.statement("SELECT confirmed_not_before, confirmed_not_after, checksum FROM timeline WHERE user_id = ?")
        defer { statement.reset() }
        statement.bind(userID, at: 1)
        guard try statement.step() else { return nil }
        return StoredAge(
            interval: ConfirmationInterval(microsecondsNotBefore: statement.optionalInt(at: 0), notAfter: statement.optionalInt(at: 1)),
            checksum: statement.int(at: 2)
        )
    }

    /// Writes `batch`'s moments that some timeline holds and that no certainly newer
    /// row keeps out, each with the likes' answers its row keeps applied; returns the
    /// ids written, and those contested: the save replaced a different value whose order
    /// against it cannot be known, or a kept like's answer changed the value written.
    func writeMoments(of batch: PersistenceBatch, confirmedWithin confirmed: ConfirmationInterval?) throws -> (written: [String], contested: [String]) {
        guard !batch.moments.isEmpty else { return ([], []) }
        var written: [String] = []
        var contested: [String] = []
        var arriving: [String: [LikeConfirmation]] = [:]
        for confirmation in batch.likeConfirmations { arriving[confirmation.momentID, default: []].append(confirmation) }
        let stored = try connection.statement("SELECT confirmed_not_before, confirmed_not_after, like_confirmations, checksum FROM moment WHERE id = ?")
        let upsert = try connection.statement("""
            INSERT INTO moment (\(SQLiteRows.momentColumns), confirmed_not_before, confirmed_not_after, like_confirmations)
            SELECT ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?
            WHERE EXISTS (SELECT 1 FROM timeline_entry WHERE moment_id = ?1)
            ON CONFLICT (id) DO UPDATE SET author_id = excluded.author_id, author_name = excluded.author_name,
                author_avatar = excluded.author_avatar, type = excluded.type, title = excluded.title, url = excluded.url,
                photos = excluded.photos, created_date = excluded.created_date, likes = excluded.likes,
                checksum = excluded.checksum, confirmed_not_before = excluded.confirmed_not_before,
                confirmed_not_after = excluded.confirmed_not_after, like_confirmations = excluded.like_confirmations
            """)
        let encoder = JSONEncoder()
        for moment in batch.moments.values {
            stored.bind(moment.id, at: 1)
            var kept: [LikeConfirmation] = []
            var replaced: (age: ConfirmationInterval?, checksum: Int64)?
            if try stored.step() {
                defer { stored.reset() }
                let age = ConfirmationInterval(microsecondsNotBefore: stored.optionalInt(at: 0), notAfter: stored.optionalInt(at: 1))
                guard ConfirmationInterval.replaces(confirmed, age) else { continue }
                replaced = (age, stored.int(at: 3))
                if !stored.isNull(at: 2) {
                    kept = try likeConfirmations(stored, at: 2) { reason in
                        PersistenceError(code: .corruptedData, location: path, reason: "moment \(moment.id.debugDescription) has \(reason)")
                    }
                }
            } else {
                stored.reset()
            }
            kept = LikeConfirmation.kept(stored: kept, arriving: arriving[moment.id] ?? [], writtenWithin: confirmed)
            let value = LikeConfirmation.applying(kept, to: moment)
            SQLiteRows.bindMoment(value, to: upsert, from: 1)
            upsert.bind(confirmed?.microseconds.notBefore, at: 12)
            upsert.bind(confirmed?.microseconds.notAfter, at: 13)
            upsert.bind(kept.isEmpty ? nil : String(decoding: try encoder.encode(kept), as: UTF8.self), at: 14)
            let before = connection.totalChanges
            try upsert.run()
            // No timeline holds it: not written.
            guard connection.totalChanges != before else { continue }
            written.append(moment.id)
            // A kept like's answer changed the value, or it replaced a different value
            // of unknown order (the checksum, computed only then, tells).
            if value != moment
                || (replaced.map { ConfirmationInterval.overlaps($0.age, confirmed) && $0.checksum != ContentChecksum.of(value) } ?? false) {
                contested.append(moment.id)
            }
        }
        return (written, contested)
    }

    /// The likes' answers stored in `row`'s `column`.
    func likeConfirmations(_ row: SQLiteStatement, at column: Int32, damaged: (String) -> PersistenceError) throws -> [LikeConfirmation] {
        guard let text = row.validText(at: column),
              let confirmations = try? JSONDecoder().decode([LikeConfirmation].self, from: Data(text.utf8)) else {
            throw damaged("likes' answers that cannot be read")
        }
        return confirmations
    }
}
