import Foundation
import Moments
import MomentsTestSupport

enum Fixtures {
    static let author = Moment.MomentUserDetails(id: "1", name: "Taylor", avatar: "https://img/1.jpg")
    static let owner = UserDetails(id: "0", name: "Jake", avatar: "https://img/0.jpg", backgroundImage: "https://img/bg0.jpg")


    static func moment(_ id: String, likedBy likers: [String] = [], viewer: String = "0") -> Moment {
        Moment(
            id: id,
            userDetails: author,
            type: .photos,
            title: "Moment \(id)",
            photos: ["https://img/\(id).jpg"],
            createdDate: "1605521360",
            isLiked: likers.contains(viewer),
            likes: likers.map { Moment.LikedUser(id: $0, avatar: "https://img/\($0).jpg") }
        )
    }

    static func timeline(user: String = "0", moments: [Moment]) -> MomentsDetails {
        MomentsDetails(
            userDetails: UserDetails(id: user, name: "User \(user)", avatar: "https://img/\(user).jpg", backgroundImage: "https://img/bg.jpg"),
            moments: moments
        )
    }
}
