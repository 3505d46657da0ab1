public import Moments

/// Timelines made up for tests.
public enum SampleTimelines {
    /// A timeline of `count` moments for `userID`, tagged with `version` so a test can
    /// tell which save it came from. Its moment ids are the user's own (`<user>/m<n>`), so
    /// timelines of different users share no moment; `isLiked` agrees with `likes`.
    public static func timeline(user userID: String, moments count: Int, version: Int = 0) -> MomentsDetails {
        MomentsDetails(
            userDetails: UserDetails(id: userID, name: "User \(userID)", avatar: "https://img/\(version).jpg", backgroundImage: "https://img/bg.jpg"),
            moments: (0..<count).map { moment(id: "\(userID)/m\($0)", version: version, index: $0, owner: userID) }
        )
    }

    /// A moment whose fields vary with `index`: optional fields absent on some, likes
    /// present or not (and then `owner` among them on even indexes), unicode, empty photos.
    public static func moment(id: String, version: Int = 0, index: Int = 0, owner: String = "0") -> Moment {
        let hasLikes = index % 5 != 4
        var likes = (0..<(index % 3)).map { Moment.LikedUser(id: "u\($0)", avatar: "https://img/u\($0).jpg") }
        if index % 2 == 0 { likes.append(Moment.LikedUser(id: owner, avatar: "https://img/owner.jpg")) }
        return Moment(
            id: id,
            userDetails: Moment.MomentUserDetails(id: "a\(index % 7)", name: "Author 🌃 \(index % 7)", avatar: "https://img/a.jpg"),
            type: index % 2 == 0 ? .url : .photos,
            title: index % 3 == 0 ? nil : "v\(version) title \(index) — 東京",
            url: index % 2 == 0 ? "https://moments.example.com/\(id)" : nil,
            photos: (0..<(index % 4)).map { "https://img/\(id)/\($0):weird:|chars" },
            createdDate: String(1_605_000_000 + index),
            isLiked: hasLikes ? index % 2 == 0 : nil,
            likes: hasLikes ? likes : nil
        )
    }

    /// User ids that are hostile as file names or SQL strings.
    public static let hostileUserIDs: [String] = [
        "../../etc/passwd", "/absolute", "a/b\\c", "..", ".", "", "CON", "nul\u{0}byte", "new\nline",
        "Robert'); DROP TABLE timeline;--", "東京🌃", "Case", "case", String(repeating: "long", count: 300),
        String(repeating: "é", count: 150),
    ]
}
