import Foundation
public import MomentsHTTP
import MomentsSupport

/// A Moments BFF in memory, with the reference BFF's data and semantics, answering the
/// SDK's GraphQL requests as a transport: give it to an `HTTPClient` (or a
/// `GraphQLMomentsService`) and your tests talk to a BFF without a socket, a process or
/// a port.
///
/// ```swift
/// let bff = InMemoryBFF()
/// let service = GraphQLMomentsService(baseURL: URL(string: "http://bff.test")!, transport: bff)
/// ```
///
/// The rules it keeps, as the real BFF does:
/// - Moments are shared: one moment may stand in several users' timelines, and its
///   `likes` are the same wherever it stands, in the order the users liked it.
/// - A like or unlike is applied atomically and answered with the liker's whole timeline
///   as it is just after; liking a liked moment changes nothing, and an unknown moment is
///   not an error. An unknown user is a GraphQL error (`no user with id '…'`).
/// - `isLiked` is the viewer's own (``IsLikedModel/perViewer``), or one value per moment
///   set by the last like or unlike of anyone (``IsLikedModel/global``, as the public BFF
///   keeps it, so it may disagree with `likes`).
/// - `withLikes: false` leaves `isLiked` and `likes` out of a timeline.
///
/// Wrap it in a ``FaultInjectingTransport`` for latency, failures and lost answers.
public final class InMemoryBFF: HTTPTransport {
    /// How the BFF computes `isLiked`.
    public enum IsLikedModel: Sendable {
        /// Whether the user whose timeline is asked likes the moment.
        case perViewer
        /// One value per moment, whoever asks: set by the last like or unlike of anyone;
        /// at first, whether anyone likes it.
        case global
    }

    /// A user of the BFF.
    public struct User: Sendable, Hashable {
        /// The user's id.
        public var id: String
        /// The display name.
        public var name: String
        /// The avatar's URL.
        public var avatar: String
        /// The profile background's URL.
        public var backgroundImage: String
    }

    struct StoredMoment {
        var id: String
        var author: String
        var type: String
        var title: String?
        var url: String?
        var photos: [String]
        var createdDate: String
    }

    struct Contents {
        var users: [String: User] = [:]
        var moments: [String: StoredMoment] = [:]
        var likers: [String: [String]] = [:]
        var globalIsLiked: [String: Bool] = [:]
        var timelines: [String: [String]] = [:]
        var queries = 0
        var mutations = 0
    }

    let model: IsLikedModel
    let data: PThreadMutex<Contents>

    /// A BFF with the reference BFF's four sample users (`"0"`…`"3"`) and moments
    /// (`"0"`…`"3"`: user `"0"`'s timeline holds all four, the others' `"0"` and `"2"`),
    /// plus `users` generated users `user-1`…`user-N`, each with `momentsPerUser`
    /// moments of their own and moment `"0"`.
    public init(isLiked model: IsLikedModel = .perViewer, users: Int = 0, momentsPerUser: Int = 10) {
        self.model = model
        data = PThreadMutex(Self.seed(users: users, momentsPerUser: momentsPerUser))
    }

    // MARK: What a test reads

    /// The ids of the users who like `momentID`, in the order they liked it; `nil` for
    /// an unknown moment.
    public func likers(of momentID: String) -> [String]? {
        data.withLock { $0.likers[momentID] }
    }

    /// The `isLiked` the BFF would answer to `viewerID` for `momentID`.
    public func isLiked(_ momentID: String, viewer viewerID: String) -> Bool {
        data.withLock { isLiked(momentID, viewer: viewerID, in: $0) }
    }

    /// The users the BFF knows.
    public var users: [User] {
        data.withLock { $0.users.values.sorted { $0.id < $1.id } }
    }

    /// How many timeline queries the BFF has answered.
    public var queryCount: Int { data.withLock { $0.queries } }

    /// How many like and unlike mutations the BFF has applied (each counts once, even
    /// when it changed nothing).
    public var mutationCount: Int { data.withLock { $0.mutations } }

    // MARK: What a test changes

    /// Has `userID` like or unlike `momentID`, as the mutation does, without a request:
    /// another client's change, for example.
    public func setLike(_ isLiked: Bool, momentID: String, userID: String) {
        data.withLock { applyLike(isLiked, momentID: momentID, userID: userID, to: &$0) }
    }

    /// Puts moment `momentID` at the top of `userID`'s timeline (a new post, or a share),
    /// written by `authorID`, with no likes.
    public func post(momentID: String, by authorID: String, to userID: String, title: String? = nil) {
        data.withLock { data in
            if data.moments[momentID] == nil {
                data.moments[momentID] = StoredMoment(
                    id: momentID, author: authorID, type: "URL", title: title,
                    url: "https://moments.example.com/\(momentID)", photos: [], createdDate: "1605600000")
                data.likers[momentID] = []
                data.globalIsLiked[momentID] = false
            }
            data.timelines[userID, default: []].removeAll { $0 == momentID }
            data.timelines[userID, default: []].insert(momentID, at: 0)
        }
    }

    // MARK: Semantics

    func isLiked(_ momentID: String, viewer viewerID: String, in data: Contents) -> Bool {
        switch model {
        case .perViewer: data.likers[momentID]?.contains(viewerID) ?? false
        case .global: data.globalIsLiked[momentID] ?? false
        }
    }

    func applyLike(_ isLiked: Bool, momentID: String, userID: String, to data: inout Contents) {
        guard var likers = data.likers[momentID] else { return }
        if model == .global { data.globalIsLiked[momentID] = isLiked }
        if isLiked, !likers.contains(userID) {
            likers.append(userID)
        } else if !isLiked {
            likers.removeAll { $0 == userID }
        }
        data.likers[momentID] = likers
    }

    private static func seed(users: Int, momentsPerUser: Int) -> Contents {
        let images = "https://images.example.com"
        func user(_ id: String, _ name: String) -> User {
            User(id: id, name: name, avatar: "\(images)/avatars/\(id).jpg", backgroundImage: "\(images)/backgrounds/\(id).jpg")
        }
        var data = Contents()
        for (id, name) in [("0", "Jake Lin"), ("1", "Taylor Swift"), ("2", "Mark Zuckerberg"), ("3", "Ada Lovelace")] {
            data.users[id] = user(id, name)
        }
        let samples: [(StoredMoment, [String])] = [
            (StoredMoment(id: "0", author: "1", type: "URL", title: "Swift on the server",
                          url: "https://www.swift.org/documentation/server/", photos: ["\(images)/moments/0.jpg"],
                          createdDate: "1605521360"), ["1", "2"]),
            (StoredMoment(id: "1", author: "2", type: "PHOTOS", title: nil, url: nil,
                          photos: (0..<3).map { "\(images)/moments/1-\($0).jpg" }, createdDate: "1605435065"), []),
            (StoredMoment(id: "2", author: "3", type: "PHOTOS", title: "東京の夜 🌃 — café", url: nil,
                          photos: ["\(images)/moments/2.jpg"], createdDate: "1605348770"), ["0"]),
            (StoredMoment(id: "3", author: "0", type: "URL", title: "Moments SDK",
                          url: "https://moments.example.com/sdk", photos: [], createdDate: "1605262475"), ["3"]),
        ]
        for (moment, likers) in samples { add(moment, likers: likers, to: &data) }
        data.timelines["0"] = samples.map(\.0.id)
        for id in ["1", "2", "3"] { data.timelines[id] = ["0", "2"] }
        if users > 0 {
            for n in 1...users {
                let id = "user-\(n)"
                data.users[id] = user(id, "User \(n)")
                var ids: [String] = []
                for j in 0..<max(0, momentsPerUser) {
                    let momentID = "\(id)-m\(j)"
                    let moment = StoredMoment(
                        id: momentID, author: id, type: j % 2 == 1 ? "PHOTOS" : "URL",
                        title: j % 5 == 4 ? nil : "Moment \(j) of user \(n)",
                        url: j % 2 == 1 ? nil : "https://moments.example.com/\(momentID)",
                        photos: (0..<(j % 3)).map { "\(images)/moments/\(momentID)-\($0).jpg" },
                        createdDate: String(1_605_000_000 - n * 1000 - j))
                    add(moment, likers: j % 3 == 0 ? ["0"] : [], to: &data)
                    ids.append(momentID)
                }
                data.timelines[id] = ids + ["0"]
            }
        }
        return data
    }

    private static func add(_ moment: StoredMoment, likers: [String], to data: inout Contents) {
        data.moments[moment.id] = moment
        data.likers[moment.id] = likers
        data.globalIsLiked[moment.id] = !likers.isEmpty
    }
}
