import Moments
import MomentsTestSupport

/// A model of the BFF for the store simulation: users whose timelines share moments, and
/// who likes what, with the history of every (moment, user) like register so a test can
/// tell whether a value it saw is older than another.
///
/// What `isLiked` means is the server's to say, so the simulation runs against two
/// models of it, and the store may assume neither.
struct SimulatedServer {
    /// What `isLiked` of a moment in a user's timeline says.
    enum IsLikedModel: String, CaseIterable, Sendable, CustomStringConvertible {
        /// Whether that user likes it (is among its `likes`).
        case perViewer = "per-viewer"
        /// One value per moment, whoever asks: the last like or unlike of anyone (the
        /// public Moments BFF), which may disagree with `likes`.
        case global

        var description: String { rawValue }
    }

    let model: IsLikedModel
    private(set) var timelines: [String: [String]]
    private(set) var likers: [String: [String]]
    /// The global model's `isLiked` of each moment.
    private(set) var globallyLiked: [String: Bool] = [:]
    /// (moment, user) → every value the register has had, oldest first.
    private(set) var history: [LikeRegister: [Bool]] = [:]

    struct LikeRegister: Hashable {
        let momentID: String
        let userID: String
    }

    init(users: Int, moments: Int, model: IsLikedModel = .perViewer, using generator: inout SeededGenerator) {
        self.model = model
        let momentIDs = (0..<moments).map { "m\($0)" }
        var timelines: [String: [String]] = [:]
        for user in 0..<users {
            let count = Int.random(in: 2...min(4, moments), using: &generator)
            timelines["u\(user)"] = Array(momentIDs.shuffled(using: &generator).prefix(count))
        }
        var likers: [String: [String]] = [:]
        for id in momentIDs {
            likers[id] = timelines.keys.sorted().filter { _ in Int.random(in: 0..<3, using: &generator) == 0 }
        }
        self.timelines = timelines
        self.likers = likers
        // Drawn apart from the likers: the global value need not agree with `likes`.
        for id in momentIDs { globallyLiked[id] = Bool.random(using: &generator) }
        for id in momentIDs {
            for user in timelines.keys { history[LikeRegister(momentID: id, userID: user)] = [likers[id]?.contains(user) ?? false] }
        }
    }

    /// A server with exactly these timelines (user → moment ids) and likers (moment → users).
    init(timelines: [String: [String]], likers: [String: [String]], model: IsLikedModel = .perViewer) {
        self.model = model
        self.timelines = timelines
        var all = likers
        for ids in timelines.values { for id in ids where all[id] == nil { all[id] = [] } }
        self.likers = all
        for id in all.keys {
            for user in timelines.keys { history[LikeRegister(momentID: id, userID: user)] = [all[id]?.contains(user) ?? false] }
        }
    }

    var userIDs: [String] { timelines.keys.sorted() }

    /// The timeline the server computes for `userID` now.
    func timeline(_ userID: String) -> MomentsDetails {
        let moments = (timelines[userID] ?? []).map { id in
            let ids = likers[id] ?? []
            let texts = AnswerTexts.of(id)
            return Moment(
                id: id, userDetails: AnswerTexts.author, type: .photos, title: texts.title, photos: texts.photos,
                createdDate: "1605521360", isLiked: model == .global ? globallyLiked[id] ?? false : ids.contains(userID),
                likes: ids.map { AnswerTexts.of($0).likedUser }
            )
        }
        return MomentsDetails(userDetails: AnswerTexts.of(userID).owner, moments: moments)
    }

    /// Applies `userID`'s like or unlike of `momentID` (idempotent; an unknown moment is
    /// not an error) and returns the liker's timeline.
    mutating func like(_ isLiked: Bool, momentID: String, userID: String) -> MomentsDetails {
        if var ids = likers[momentID] {
            let had = ids.contains(userID)
            if isLiked, !had { ids.append(userID) }
            if !isLiked, had { ids.removeAll { $0 == userID } }
            likers[momentID] = ids
            globallyLiked[momentID] = isLiked
            if had != isLiked { history[LikeRegister(momentID: momentID, userID: userID), default: [had]].append(isLiked) }
        }
        return timeline(userID)
    }

    /// Whether a sequence of values seen for one register can be a walk forward through
    /// its history: each value matched to a version no earlier than the previous one's.
    func isMonotone(_ seen: [Bool], momentID: String, userID: String) -> Bool {
        let versions = history[LikeRegister(momentID: momentID, userID: userID)] ?? [false]
        var position = 0
        for value in seen {
            guard let match = versions[position...].firstIndex(of: value) else { return false }
            position = match
        }
        return true
    }
}

/// The texts of the server's answers, made once for the ids simulations use: a timeline
/// is computed at every request, with the same texts each time.
private struct AnswerTexts {
    static let author = Moment.MomentUserDetails(id: "author", name: "Author", avatar: "https://img/author.jpg")
    private static let made = Dictionary(uniqueKeysWithValues: ((0..<16).map { "u\($0)" } + (0..<16).map { "m\($0)" }).map { ($0, AnswerTexts($0)) })

    /// As a timeline's owner.
    let owner: UserDetails
    /// As a liker.
    let likedUser: Moment.LikedUser
    /// As a moment.
    let title: String
    let photos: [String]

    private init(_ id: String) {
        let image = "https://img/\(id).jpg"
        owner = UserDetails(id: id, name: "User \(id)", avatar: image, backgroundImage: "https://img/bg.jpg")
        likedUser = Moment.LikedUser(id: id, avatar: image)
        title = "Moment \(id)"
        photos = [image]
    }

    /// The texts of `id` (a user's or a moment's).
    static func of(_ id: String) -> AnswerTexts { made[id] ?? AnswerTexts(id) }
}
