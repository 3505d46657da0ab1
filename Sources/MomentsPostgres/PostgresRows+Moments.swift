import Foundation
import Moments

/// Writing moment rows: the ordering rule and the likes' answers each row keeps.
extension PostgresRows {
    /// A stored moment row, locked, as its write needs it.
    private struct StoredMoment {
        var value: String?
        var confirmed: Confirmed
        var likeConfirmations: String?

        var interval: ConfirmationInterval? {
            ConfirmationInterval(microsecondsNotBefore: confirmed.notBefore, notAfter: confirmed.notAfter)
        }
    }

    /// What one moment's write puts in its row.
    private struct MomentWrite {
        var id: String
        var value: String
        var likeConfirmations: String?
        var isContested: Bool
    }

    /// Writes `batch`'s moments that some timeline holds, noting in `written` those
    /// written and those contested: their write replaced a different value of unknown
    /// order, or a like's answer the row keeps changed the written value.
    ///
    /// The database never goes back: a row the server certainly confirmed after the
    /// incoming value was computed stays, and a value of unknown age (from a cache)
    /// never replaces a confirmed one. A row keeps the answers to likes
    /// (``LikeConfirmation``) until a write certainly computed after them, each the
    /// authority for its liker's register in every value written meanwhile.
    ///
    /// The rows are locked in key order and decided here. A row another instance
    /// inserts between the lock and this write is locked and decided again.
    static func writeMoments(of batch: PersistenceBatch, confirmed: Confirmed, into written: inout Written, on connection: PostgresConnection) throws {
        var pending = batch.moments.keys.sorted()
        // As stored, to the microsecond, so it compares with stored rows exactly.
        let incoming = ConfirmationInterval(microsecondsNotBefore: confirmed.notBefore, notAfter: confirmed.notAfter)
        var arriving: [String: [LikeConfirmation]] = [:]
        for confirmation in batch.likeConfirmations { arriving[confirmation.momentID, default: []].append(confirmation) }
        // The first pass writes every row, unless another instance inserted it since it
        // was locked (or no timeline holds it): a second pass decides those it finds.
        for pass in 0..<2 where !pending.isEmpty {
            let stored = try lockMoments(pending, on: connection)
            var updates: [MomentWrite] = [], inserts: [MomentWrite] = []
            for id in pending {
                guard let moment = batch.moments[id] else { continue }
                let old = stored[StoredID.encode(id)]
                if old == nil, pass > 0 { continue }
                if let old, !ConfirmationInterval.replaces(incoming, old.interval) { continue }
                let write = try momentWrite(moment, replacing: old, arriving: arriving[id] ?? [], within: batch.confirmedWithin, confirmed: confirmed)
                if old == nil { inserts.append(write) } else { updates.append(write) }
            }
            try update(updates, confirmed: confirmed, on: connection)
            let inserted = try insert(inserts, confirmed: confirmed, on: connection)
            for write in updates + inserts.filter({ inserted.contains($0.id) }) {
                written.momentIDs.append(write.id)
                if write.isContested { written.contested.append(write.id) }
            }
            pending = inserts.map(\.id).filter { !inserted.contains($0) }
        }
    }

    /// The stored rows among `ids`, locked in key order: a save waiting on another
    /// instance's write of the same moment compares with what that write committed, not
    /// with what the row held when this save's statement began.
    private static func lockMoments(_ ids: [String], on connection: PostgresConnection) throws -> [String: StoredMoment] {
        let result = try connection.query(
            "SELECT id, value::text, confirmed_not_before, confirmed_not_after, like_confirmations::text FROM moments_moment WHERE id = ANY($1::text[]) ORDER BY id FOR UPDATE",
            [PostgresArray.literal(ids.map(StoredID.encode))]
        )
        var stored: [String: StoredMoment] = [:]
        for row in 0..<result.rowCount {
            guard let id = result.text(row, 0) else { continue }
            stored[id] = StoredMoment(
                value: result.text(row, 1),
                confirmed: (result.text(row, 2).flatMap { Int64($0) }, result.text(row, 3).flatMap { Int64($0) }),
                likeConfirmations: result.text(row, 4)
            )
        }
        return stored
    }

    /// The row `moment`'s write leaves: its value with the kept likes' answers applied.
    private static func momentWrite(
        _ moment: Moment, replacing old: StoredMoment?, arriving: [LikeConfirmation], within interval: ConfirmationInterval?, confirmed: Confirmed
    ) throws -> MomentWrite {
        var incoming = moment
        incoming.isLiked = nil
        let incomingText = try json(incoming)
        // Contested: it replaces another value, confirmed no earlier than the incoming
        // one may have been (always, when the incoming one's start is unknown).
        var isContested = false
        if let old, old.value != incomingText,
           ConfirmationInterval.overlaps(old.interval, ConfirmationInterval(microsecondsNotBefore: confirmed.notBefore, notAfter: confirmed.notAfter)) {
            isContested = true
        }
        let stored: [LikeConfirmation] = try old?.likeConfirmations.map {
            try decode($0, userID: nil, what: "likes' answers kept with moment \(moment.id.debugDescription)")
        } ?? []
        guard !stored.isEmpty || !arriving.isEmpty else {
            return MomentWrite(id: moment.id, value: incomingText, likeConfirmations: nil, isContested: isContested)
        }
        let kept = LikeConfirmation.kept(stored: stored, arriving: arriving, writtenWithin: interval)
        let value = LikeConfirmation.applying(kept, to: incoming)
        // A register a kept answer overrides: the writer holds a value of unknown order
        // against the row, which the server settles.
        if value != incoming { isContested = true }
        return MomentWrite(id: moment.id, value: value == incoming ? incomingText : try json(value),
                           likeConfirmations: kept.isEmpty ? nil : try json(kept), isContested: isContested)
    }

    private static func update(_ writes: [MomentWrite], confirmed: Confirmed, on connection: PostgresConnection) throws {
        guard !writes.isEmpty else { return }
        try connection.query("""
            UPDATE moments_moment AS s SET value = m.value, confirmed_not_before = $4, confirmed_not_after = $5, like_confirmations = m.likes
            FROM unnest($1::text[], $2::json[], $3::json[]) AS m(id, value, likes) WHERE s.id = m.id
            """, columns(of: writes, confirmed: confirmed))
    }

    /// Inserts the rows of `writes` that some timeline holds and no other instance
    /// inserted meanwhile; returns the ids inserted.
    private static func insert(_ writes: [MomentWrite], confirmed: Confirmed, on connection: PostgresConnection) throws -> Set<String> {
        guard !writes.isEmpty else { return [] }
        let result = try connection.query("""
            INSERT INTO moments_moment (id, value, confirmed_not_before, confirmed_not_after, like_confirmations)
            SELECT m.id, m.value, $4, $5, m.likes FROM unnest($1::text[], $2::json[], $3::json[]) AS m(id, value, likes)
            WHERE EXISTS (SELECT 1 FROM moments_timeline_entry e WHERE e.moment_id = m.id)
            ON CONFLICT (id) DO NOTHING
            RETURNING id
            """, columns(of: writes, confirmed: confirmed))
        return Set((0..<result.rowCount).compactMap { result.text($0, 0).map(StoredID.decode) })
    }

    private static func columns(of writes: [MomentWrite], confirmed: Confirmed) -> [String?] {
        [
            PostgresArray.literal(writes.map { StoredID.encode($0.id) }),
            PostgresArray.literal(writes.map(\.value)),
            PostgresArray.literal(writes.map(\.likeConfirmations)),
            confirmed.notBefore.map(String.init), confirmed.notAfter.map(String.init),
        ]
    }
}
