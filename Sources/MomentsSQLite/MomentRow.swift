import Moments

/// How a ``Moment`` maps to the columns of the `moment` table, from `id` to `likes`.
enum MomentRow {
    /// Binds the eleven columns `id … likes` starting at parameter `first`.
    static func bind(_ moment: Moment, to statement: SQLiteStatement, from first: Int32) {
        statement.bind(moment.id, at: first)
        statement.bind(moment.userDetails.id, at: first + 1)
        statement.bind(moment.userDetails.name, at: first + 2)
        statement.bind(moment.userDetails.avatar, at: first + 3)
        statement.bind(moment.type.rawValue, at: first + 4)
        statement.bind(moment.title, at: first + 5)
        statement.bind(moment.url, at: first + 6)
        statement.bind(StringListCoding.encode(moment.photos), at: first + 7)
        statement.bind(moment.createdDate, at: first + 8)
        statement.bind(moment.isLiked, at: first + 9)
        statement.bind(moment.likes.map { likes in StringListCoding.encode(likes.flatMap { [$0.id, $0.avatar] }) }, at: first + 10)
    }

    /// Reads the columns `id … likes` of the current row.
    static func read(_ row: SQLiteStatement, location: String, userID: String) throws -> Moment {
        func damaged(_ what: String) -> PersistenceError {
            PersistenceError(code: .corruptedData, location: location, userID: userID, reason: "a moment row has \(what)")
        }
        guard let type = MomentType(rawValue: row.text(at: 4)) else { throw damaged("an unknown type") }
        let photos: [String]
        var likes: [Moment.LikedUser]?
        do {
            photos = try StringListCoding.decode(row.text(at: 7))
            if let encoded = row.optionalText(at: 10) {
                let flat = try StringListCoding.decode(encoded)
                guard flat.count % 2 == 0 else { throw damaged("an odd likes list") }
                likes = stride(from: 0, to: flat.count, by: 2).map { Moment.LikedUser(id: flat[$0], avatar: flat[$0 + 1]) }
            }
        } catch is StringListCoding.Malformed {
            throw damaged("a malformed list")
        }
        return Moment(
            id: row.text(at: 0),
            userDetails: Moment.MomentUserDetails(id: row.text(at: 1), name: row.text(at: 2), avatar: row.text(at: 3)),
            type: type,
            title: row.optionalText(at: 5),
            url: row.optionalText(at: 6),
            photos: photos,
            createdDate: row.text(at: 8),
            isLiked: row.isNull(at: 9) ? nil : row.int(at: 9) != 0,
            likes: likes
        )
    }
}
