import Foundation
import Moments

/// Reading and writing the schema's rows on one connection (see ``PostgresSchema``).
///
/// Writes pass each column as one array parameter and `unnest` it, so a batch costs a
/// few round trips whatever its size; rows are written in key order, so concurrent
/// writers lock them in the same order.
enum PostgresRows {
    /// A stored row could not be read back.
    struct Damaged: Error {
        let userID: String?
        let reason: String
    }

    /// A timeline lists a moment stored nowhere.
    struct MissingMoment: Error {
        let momentID: String
        let userID: String
    }

    // MARK: Writing

    /// What a write changed: the moments written (a moment no timeline holds is not
    /// stored), and those among them whose write replaced a different value of unknown
    /// order (see `MomentsChangeBus`).
    struct Written {
        var momentIDs: [String] = []
        var contested: [String] = []
        /// The timelines written (one the database holds a certainly newer value of is not).
        var userIDs: [String] = []
        /// Those among them whose write replaced a different value of unknown order.
        var contestedUserIDs: [String] = []
    }

    /// When the server confirmed a batch, in microseconds since 1970, as stored.
    typealias Confirmed = (notBefore: Int64?, notAfter: Int64?)

    /// Writes `batch` in the current transaction: its timelines (those the database
    /// holds no certainly newer value of), then its moments, then drops the moments
    /// no timeline holds any longer.
    static func write(_ batch: PersistenceBatch, on connection: PostgresConnection) throws -> Written {
        let confirmed: Confirmed = (batch.confirmedWithin?.microseconds.notBefore, batch.confirmedWithin?.microseconds.notAfter)
        var written = Written()
        let users = try timelinesToWrite(batch, confirmed: confirmed, into: &written, on: connection)
        let released = users.isEmpty ? [] : try writeTimelines(users, of: batch, confirmed: confirmed, on: connection)
        try writeMoments(of: batch, confirmed: confirmed, into: &written, on: connection)
        try removeStoredOrphans(released, on: connection)
        return written
    }

    /// Replaces the rows and entries of `users`' timelines with `batch`'s; returns the
    /// moments the old entries held that the new ones do not (possible orphans).
    private static func writeTimelines(_ users: [String], of batch: PersistenceBatch, confirmed: Confirmed, on connection: PostgresConnection) throws -> [String] {
        // The timeline rows first: their locks make instances writing the same
        // timeline take turns, so each one's DELETE below (a new snapshot) sees the
        // entries the other committed.
        try connection.query("""
            INSERT INTO moments_timeline (user_id, owner, confirmed_not_before, confirmed_not_after)
            SELECT t.user_id, t.owner, $3, $4 FROM unnest($1::text[], $2::json[]) AS t(user_id, owner)
            ON CONFLICT (user_id) DO UPDATE SET owner = excluded.owner,
                confirmed_not_before = excluded.confirmed_not_before, confirmed_not_after = excluded.confirmed_not_after
            """, [
                PostgresArray.literal(users.map(StoredID.encode)),
                PostgresArray.literal(try users.map { try json(batch.timelines[$0]?.userDetails) }),
                confirmed.notBefore.map(String.init), confirmed.notAfter.map(String.init),
            ])
        let removed = try connection.query(
            "DELETE FROM moments_timeline_entry WHERE user_id = ANY($1::text[]) RETURNING moment_id",
            [PostgresArray.literal(users.map(StoredID.encode))]
        )
        var released = (0..<removed.rowCount).compactMap { removed.text($0, 0) }
        try requireStored(batch, users: users, on: connection)
        var entryUsers: [String] = [], positions: [String] = [], momentIDs: [String] = [], likes: [String?] = []
        for user in users {
            for (position, entry) in (batch.timelines[user]?.entries ?? []).enumerated() {
                entryUsers.append(StoredID.encode(user))
                positions.append(String(position))
                momentIDs.append(StoredID.encode(entry.momentID))
                likes.append(entry.isLiked.map { $0 ? "t" : "f" })
            }
        }
        if !entryUsers.isEmpty {
            try connection.query("""
                INSERT INTO moments_timeline_entry (user_id, position, moment_id, is_liked)
                SELECT * FROM unnest($1::text[], $2::integer[], $3::text[], $4::boolean[])
                """, [PostgresArray.literal(entryUsers), PostgresArray.literal(positions), PostgresArray.literal(momentIDs), PostgresArray.literal(likes)])
        }
        // A moment the new entries hold again is not an orphan: only the others are
        // looked for (a refresh usually lists the same moments).
        let held = Set(momentIDs)
        released.removeAll { held.contains($0) }
        return released
    }

    /// The users of `batch` whose timeline rows it replaces, in key order, their rows
    /// locked: the database never goes back (a row the server certainly confirmed after
    /// the incoming timeline was computed stays, and a timeline of unknown age never
    /// replaces a confirmed one), and a replaced row holding a different owner, list or
    /// `isLiked` of unknown order against the incoming one is contested.
    private static func timelinesToWrite(
        _ batch: PersistenceBatch, confirmed: Confirmed, into written: inout Written, on connection: PostgresConnection
    ) throws -> [String] {
        let users = batch.timelines.keys.sorted()
        guard !users.isEmpty else { return [] }
        let keys = PostgresArray.literal(users.map(StoredID.encode))
        let rows = try connection.query(
            "SELECT user_id, owner::text, confirmed_not_before, confirmed_not_after FROM moments_timeline WHERE user_id = ANY($1::text[]) ORDER BY user_id FOR UPDATE",
            [keys]
        )
        var stored: [String: (owner: String?, notBefore: Int64?, notAfter: Int64?, entries: [StoredTimeline.Entry])] = [:]
        for row in 0..<rows.rowCount {
            guard let key = rows.text(row, 0) else { continue }
            stored[StoredID.decode(key)] = (rows.text(row, 1), rows.text(row, 2).flatMap { Int64($0) }, rows.text(row, 3).flatMap { Int64($0) }, [])
        }
        if !stored.isEmpty {
            let entries = try connection.query(
                "SELECT user_id, moment_id, is_liked FROM moments_timeline_entry WHERE user_id = ANY($1::text[]) ORDER BY user_id, position", [keys]
            )
            for row in 0..<entries.rowCount {
                guard let key = entries.text(row, 0), let momentID = entries.text(row, 1) else { continue }
                stored[StoredID.decode(key)]?.entries.append(
                    StoredTimeline.Entry(momentID: StoredID.decode(momentID), isLiked: entries.text(row, 2).map { $0 == "t" })
                )
            }
        }
        var replaced: [String] = []
        for user in users {
            guard let incoming = batch.timelines[user] else { continue }
            if let old = stored[user] {
                let replaces: Bool
                if let notAfter = confirmed.notAfter {
                    replaces = old.notBefore.map { $0 <= notAfter } ?? true
                } else {
                    replaces = old.notAfter == nil
                }
                guard replaces else { continue }
                if let oldNotAfter = old.notAfter, confirmed.notBefore.map({ oldNotAfter >= $0 }) ?? true,
                   old.entries != incoming.entries || old.owner != (try? json(incoming.userDetails)) {
                    written.contestedUserIDs.append(user)
                }
            }
            replaced.append(user)
        }
        written.userIDs = replaced
        return replaced
    }

    private static func requireStored(_ batch: PersistenceBatch, users: [String], on connection: PostgresConnection) throws {
        var elsewhere: [(user: String, momentID: String)] = []
        for user in users {
            for entry in batch.timelines[user]?.entries ?? [] where batch.moments[entry.momentID] == nil {
                elsewhere.append((user, entry.momentID))
            }
        }
        guard !elsewhere.isEmpty else { return }
        let result = try connection.query(
            "SELECT m.id FROM unnest($1::text[]) AS m(id) WHERE NOT EXISTS (SELECT 1 FROM moments_moment s WHERE s.id = m.id)",
            [PostgresArray.literal(elsewhere.map { StoredID.encode($0.momentID) })]
        )
        if let missing = result.text(0, 0).map(StoredID.decode), let owner = elsewhere.first(where: { $0.momentID == missing }) {
            throw MissingMoment(momentID: missing, userID: owner.user)
        }
    }

    /// Deletes those of `ids` (as stored) that no timeline holds any more.
    static func removeStoredOrphans(_ ids: [String], on connection: PostgresConnection) throws {
        guard !ids.isEmpty else { return }
        try connection.query("""
            DELETE FROM moments_moment m WHERE m.id = ANY($1::text[])
            AND NOT EXISTS (SELECT 1 FROM moments_timeline_entry e WHERE e.moment_id = m.id)
            """, [PostgresArray.literal(Set(ids).sorted())])
    }

    // MARK: Reading

    /// `userID`'s timeline as its owner sees it, and when its list was confirmed.
    static func timeline(of userID: String, on connection: PostgresConnection) throws -> (MomentsDetails, ConfirmationInterval?)? {
        let result = try connection.query("""
            SELECT t.owner, t.confirmed_not_before, t.confirmed_not_after, e.moment_id, e.is_liked, m.value
            FROM moments_timeline t
            LEFT JOIN moments_timeline_entry e ON e.user_id = t.user_id
            LEFT JOIN moments_moment m ON m.id = e.moment_id
            WHERE t.user_id = $1 ORDER BY e.position
            """, [StoredID.encode(userID)])
        guard result.rowCount > 0 else { return nil }
        let owner: UserDetails = try decode(result.text(0, 0), userID: userID, what: "owner")
        var values: [String] = []
        var entries: [(momentID: String, isLiked: Bool?)] = []
        for row in 0..<result.rowCount {
            guard let momentID = result.text(row, 3).map(StoredID.decode) else { continue }
            guard let value = result.text(row, 5) else {
                throw Damaged(userID: userID, reason: "the timeline lists moment \(momentID.debugDescription), which is not stored")
            }
            values.append(value)
            entries.append((momentID, result.text(row, 4).map { $0 == "t" }))
        }
        // The SDK's fast reader over the whole list; `JSONDecoder` row by row only when
        // it cannot read them, to name a damaged one.
        let decoded: [Moment]
        if let all = TimelineFastDecoding.decodeMoments("[" + values.joined(separator: ",") + "]"), all.count == values.count {
            decoded = all
        } else {
            decoded = try zip(values, entries).map { value, entry in
                try decode(value, userID: userID, what: "moment \(entry.momentID.debugDescription)")
            }
        }
        let moments = zip(decoded, entries).map { moment, entry in moment.withIsLiked(entry.isLiked) }
        return (MomentsDetails(userDetails: owner, moments: moments), interval(result, row: 0, from: 1))
    }

    /// The stored moments among `ids`, with when each was confirmed.
    static func moments(_ ids: [String], contested: Set<String> = [], on connection: PostgresConnection) throws -> [CommittedMoment] {
        guard !ids.isEmpty else { return [] }
        let result = try connection.query(
            "SELECT id, value, confirmed_not_before, confirmed_not_after, like_confirmations FROM moments_moment WHERE id = ANY($1::text[]) ORDER BY id",
            [PostgresArray.literal(ids.map(StoredID.encode))]
        )
        return try (0..<result.rowCount).map { row in
            let what = "moment \(StoredID.decode(result.text(row, 0) ?? "").debugDescription)"
            let moment: Moment = try decode(result.text(row, 1), userID: nil, what: what)
            var confirmed = interval(result, row: row, from: 2)
            if let kept = result.text(row, 4) {
                // Registers the kept likes' answers set were computed when those were.
                let confirmations: [LikeConfirmation] = try decode(kept, userID: nil, what: "likes' answers kept with \(what)")
                confirmed = LikeConfirmation.interval(ofContent: confirmed, keeping: confirmations)
            }
            return CommittedMoment(moment: moment, confirmedWithin: confirmed, isContested: contested.contains(moment.id))
        }
    }

    /// What the database holds for `momentIDs` and the timelines of `userIDs`, read from
    /// one snapshot: every moment a timeline lists is among the commit's moments, with
    /// the age of its own row (see `SharedCommit`).
    static func committedState(
        momentIDs: [String], userIDs: [String], contested: Set<String> = [], contestedUsers: Set<String> = [], on connection: PostgresConnection
    ) throws -> SharedCommit {
        try connection.execute("BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY")
        do {
            var commit = SharedCommit()
            var ids = Set(momentIDs)
            for userID in userIDs.sorted() {
                if let (details, interval) = try timeline(of: userID, on: connection) {
                    commit.timelines.append(CommittedTimeline(
                        userID: userID, details: details, confirmedWithin: interval, isContested: contestedUsers.contains(userID)
                    ))
                    ids.formUnion(details.moments.map(\.id))
                }
            }
            commit.moments = try moments(ids.sorted(), contested: contested, on: connection)
            try connection.execute("COMMIT")
            return commit
        } catch {
            if connection.isOpen { try? connection.execute("ROLLBACK") }
            throw error
        }
    }

    // MARK: Coding

    private static func interval(_ result: PostgresResult, row: Int, from column: Int) -> ConfirmationInterval? {
        ConfirmationInterval(microsecondsNotBefore: result.text(row, column).flatMap(Int64.init), notAfter: result.text(row, column + 1).flatMap(Int64.init))
    }

    /// Keys in a fixed order, so equal values are equal texts (contested rows are found
    /// by comparing them).
    static func json(_ value: (some Encodable)?) throws -> String {
        let encoder = JSONEncoder()
        encoder.outputFormatting = .sortedKeys
        return String(decoding: try encoder.encode(value), as: UTF8.self)
    }

    static func decode<T: Decodable>(_ text: String?, userID: String?, what: String) throws -> T {
        guard let text else { throw Damaged(userID: userID, reason: "the \(what) is missing") }
        do {
            return try JSONDecoder().decode(T.self, from: Data(text.utf8))
        } catch {
            throw Damaged(userID: userID, reason: "the stored \(what) cannot be read: \(error)")
        }
    }
}
