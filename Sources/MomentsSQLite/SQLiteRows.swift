import Moments

/// How moments and timelines map to rows, and how rows are checked when read back.
enum SQLiteRows {
    /// The columns of `moment`, in the order ``bindMoment(_:to:from:)`` binds them.
    static let momentColumns = "id, author_id, author_name, author_avatar, type, title, url, photos, created_date, likes, checksum"

    /// Binds the eleven columns of ``momentColumns`` starting at parameter `first`.
    static func bindMoment(_ moment: Moment, to statement: SQLiteStatement, from first: Int32) {
        statement.bind(moment.id, at: first)
        statement.bind(moment.userDetails.id, at: first + 1)
        statement.bind(moment.userDetails.name, at: first + 2)
        statement.bind(moment.userDetails.avatar, at: first + 3)
        statement.bind(moment.type.rawValue, at: first + 4)
        statement.bind(moment.title, at: first + 5)
        statement.bind(moment.url, at: first + 6)
        statement.bind(StringListCoding.encode(moment.photos), at: first + 7)
        statement.bind(moment.createdDate, at: first + 8)
        statement.bind(moment.likes.map { likes in StringListCoding.encode(likes.flatMap { [$0.id, $0.avatar] }) }, at: first + 9)
        statement.bind(ContentChecksum.of(moment), at: first + 10)
    }

    /// Reads the columns of ``momentColumns`` starting at `first`, checking the checksum.
    /// `isLiked` is left `nil`: it belongs to each timeline.
    static func readMoment(_ row: SQLiteStatement, from first: Int32, damaged: (String) -> PersistenceError) throws -> Moment {
        func text(_ column: Int32) throws -> String {
            guard let text = row.validText(at: first + column) else { throw damaged("text that is not valid UTF-8") }
            return text
        }
        func optionalText(_ column: Int32) throws -> String? {
            row.isNull(at: first + column) ? nil : try text(column)
        }
        guard let type = Moment.MomentType(rawValue: try text(4)) else { throw damaged("an unknown moment type") }
        let photos: [String]
        var likes: [Moment.LikedUser]?
        do {
            photos = try StringListCoding.decode(try text(7))
            if let encoded = try optionalText(9) {
                let flat = try StringListCoding.decode(encoded)
                guard flat.count % 2 == 0 else { throw damaged("an odd likes list") }
                likes = stride(from: 0, to: flat.count, by: 2).map { Moment.LikedUser(id: flat[$0], avatar: flat[$0 + 1]) }
            }
        } catch is StringListCoding.Malformed {
            throw damaged("a malformed list")
        }
        let moment = Moment(
            id: try text(0),
            userDetails: Moment.MomentUserDetails(id: try optionalText(1), name: try text(2), avatar: try text(3)),
            type: type,
            title: try optionalText(5),
            url: try optionalText(6),
            photos: photos,
            createdDate: try text(8),
            likes: likes
        )
        guard row.int(at: first + 10) == ContentChecksum.of(moment) else {
            throw damaged("content that does not match its checksum (moment \(moment.id.debugDescription))")
        }
        return moment
    }

    /// Recomputes every row's checksum (after a migration that copied rows in SQL).
    static func recomputeChecksums(_ connection: SQLiteConnection) throws {
        let moments = try connection.statement("SELECT \(momentColumns) FROM moment")
        var read: [Moment] = []
        while try moments.step() {
            read.append(try readMomentIgnoringChecksum(moments))
        }
        moments.reset()
        let update = try connection.statement("UPDATE moment SET checksum = ? WHERE id = ?")
        for moment in read {
            update.bind(ContentChecksum.of(moment), at: 1)
            update.bind(moment.id, at: 2)
            try update.run()
        }
        let users = try connection.statement("SELECT user_id FROM timeline")
        var userIDs: [String] = []
        while try users.step() { userIDs.append(users.text(at: 0)) }
        users.reset()
        for userID in userIDs {
            guard let timeline = try readTimelineIgnoringChecksum(connection, userID: userID) else { continue }
            let update = try connection.statement("UPDATE timeline SET checksum = ? WHERE user_id = ?")
            update.bind(ContentChecksum.of(timeline, userID: userID), at: 1)
            update.bind(userID, at: 2)
            try update.run()
        }
    }

    private static func readMomentIgnoringChecksum(_ row: SQLiteStatement) throws -> Moment {
        let likes = row.optionalText(at: 9).flatMap { try? StringListCoding.decode($0) }.map { flat in
            stride(from: 0, to: flat.count - flat.count % 2, by: 2).map { Moment.LikedUser(id: flat[$0], avatar: flat[$0 + 1]) }
        }
        return Moment(
            id: row.text(at: 0),
            userDetails: Moment.MomentUserDetails(id: row.optionalText(at: 1), name: row.text(at: 2), avatar: row.text(at: 3)),
            type: Moment.MomentType(rawValue: row.text(at: 4)) ?? .photos,
            title: row.optionalText(at: 5), url: row.optionalText(at: 6),
            photos: (try? StringListCoding.decode(row.text(at: 7))) ?? [],
            createdDate: row.text(at: 8), likes: likes
        )
    }

    private static func readTimelineIgnoringChecksum(_ connection: SQLiteConnection, userID: String) throws -> StoredTimeline? {
        let owner = try connection.statement(
            "SELECT owner_id, owner_name, owner_avatar, owner_background FROM timeline WHERE user_id = ?"
        )
        defer { owner.reset() }
        owner.bind(userID, at: 1)
        guard try owner.step() else { return nil }
        let user = UserDetails(id: owner.text(at: 0), name: owner.text(at: 1), avatar: owner.text(at: 2), backgroundImage: owner.text(at: 3))
        let entries = try connection.statement("SELECT moment_id, is_liked FROM timeline_entry WHERE user_id = ? ORDER BY position")
        defer { entries.reset() }
        entries.bind(userID, at: 1)
        var list: [StoredTimeline.Entry] = []
        while try entries.step() {
            list.append(StoredTimeline.Entry(momentID: entries.text(at: 0), isLiked: entries.isNull(at: 1) ? nil : entries.int(at: 1) != 0))
        }
        return StoredTimeline(userDetails: user, entries: list)
    }
}
