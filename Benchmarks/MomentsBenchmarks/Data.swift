import Foundation
import Moments

/// Deterministic timelines for the benchmarks.
enum BenchmarkData {
    static func timeline(user: String = "0", moments count: Int) -> MomentsDetails {
        MomentsDetails(
            userDetails: UserDetails(id: user, name: "User \(user)", avatar: "https://images.example.com/avatars/\(user).jpg",
                                     backgroundImage: "https://images.example.com/backgrounds/\(user).jpg"),
            moments: (0..<count).map { index in
                Moment(
                    id: "m\(index)",
                    userDetails: Moment.MomentUserDetails(id: "a\(index % 50)", name: "Author \(index % 50)", avatar: "https://images.example.com/avatars/a\(index % 50).jpg"),
                    type: index % 2 == 0 ? .url : .photos,
                    title: index % 5 == 4 ? nil : "Moment \(index) — 東京の夜 🌃",
                    url: index % 2 == 0 ? "https://moments.example.com/m\(index)" : nil,
                    photos: (0..<(index % 4)).map { "https://images.example.com/moments/m\(index)-\($0).jpg" },
                    createdDate: String(1_605_521_360 - index * 60),
                    isLiked: index % 3 == 0,
                    likes: (0..<(index % 4)).map { Moment.LikedUser(id: "u\($0)", avatar: "https://images.example.com/avatars/u\($0).jpg") }
                )
            }
        )
    }

    /// `{"data": {"getMomentsDetailsByUserID": …}}` bytes, as the BFF answers.
    static func envelope(_ details: MomentsDetails) -> Data {
        struct Inner: Encodable { let getMomentsDetailsByUserID: MomentsDetails }
        struct Envelope: Encodable { let data: Inner }
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys]
        return (try? encoder.encode(Envelope(data: Inner(getMomentsDetailsByUserID: details)))) ?? Data()
    }
}

/// The same shape decoded with nothing but `Decodable` (the baseline).
struct PlainEnvelope: Decodable {
    struct Inner: Decodable { let getMomentsDetailsByUserID: MomentsDetails }
    let data: Inner
}
