public import Moments

/// A ``MomentsService`` with server-side state in memory, whose answers can be held back
/// or made to fail, for store tests.
///
/// Moments are global: one moment can stand in several users' timelines, as on the BFF.
public actor FakeMomentsService: MomentsService {
    public struct InjectedFailure: Error, Equatable, CustomStringConvertible {
        public let message: String
        public var description: String { message }
    }

    private var users: [String: UserDetails] = [:]
    private var moments: [String: Moment] = [:]
    private var likers: [String: [String]] = [:]
    private var timelines: [String: [String]] = [:]
    private var failures: [InjectedFailure] = []
    private var heldCalls: Int = 0
    private var gate: [CheckedContinuation<Void, Never>] = []
    private var gateWatchers: [(count: Int, continuation: CheckedContinuation<Void, Never>)] = []
    public private(set) var calls: [String] = []

    public init() {}

    /// Adds a user whose timeline holds `momentIDs` (moments are created as needed).
    public func addUser(_ id: String, moments momentIDs: [String], likedBy initialLikers: [String: [String]] = [:]) {
        users[id] = UserDetails(id: id, name: "User \(id)", avatar: "https://img/\(id).jpg", backgroundImage: "https://img/bg.jpg")
        for momentID in momentIDs where moments[momentID] == nil {
            moments[momentID] = Moment(
                id: momentID,
                userDetails: Moment.MomentUserDetails(id: "author", name: "Author", avatar: "https://img/author.jpg"),
                type: .photos, title: "Moment \(momentID)", photos: ["https://img/\(momentID).jpg"], createdDate: "1605521360"
            )
            likers[momentID] = initialLikers[momentID] ?? []
        }
        timelines[id] = momentIDs
    }

    /// The next `count` calls throw.
    public func failNext(_ count: Int = 1, message: String = "injected failure") {
        failures += Array(repeating: InjectedFailure(message: message), count: count)
    }

    /// The next `count` calls wait until ``release()``.
    public func holdNext(_ count: Int = 1) { heldCalls += count }

    /// Lets every held call go on.
    public func release() {
        let waiting = gate
        gate.removeAll()
        for continuation in waiting { continuation.resume() }
    }

    /// How many calls are waiting at the gate.
    public var waitingCalls: Int { gate.count }

    /// Returns once `count` calls are waiting at the gate: an event the service reports,
    /// however long a busy machine takes to get there.
    public func waitForWaitingCalls(_ count: Int) async {
        guard gate.count < count else { return }
        await withCheckedContinuation { gateWatchers.append((count, $0)) }
    }

    /// The server's view of `userID`'s timeline.
    public func serverTimeline(_ userID: String) throws -> MomentsDetails {
        guard let user = users[userID] else { throw InjectedFailure(message: "no user \(userID)") }
        let moments = (timelines[userID] ?? []).compactMap { id -> Moment? in
            guard var moment = self.moments[id] else { return nil }
            let ids = likers[id] ?? []
            moment.isLiked = ids.contains(userID)
            moment.likes = ids.map { Moment.LikedUser(id: $0, avatar: "https://img/\($0).jpg") }
            return moment
        }
        return MomentsDetails(userDetails: user, moments: moments)
    }

    public func getMoments(userID: String) async throws -> MomentsDetails {
        calls.append("get \(userID)")
        try await pass()
        return try serverTimeline(userID)
    }

    public func updateLike(_ isLiked: Bool, momentID: String, fromUserID userID: String) async throws -> MomentsDetails {
        calls.append("like \(isLiked) \(momentID) \(userID)")
        try await pass()
        if var ids = likers[momentID] {
            ids.removeAll { $0 == userID }
            if isLiked { ids.append(userID) }
            likers[momentID] = ids
        }
        return try serverTimeline(userID)
    }

    private func pass() async throws {
        if heldCalls > 0 {
            heldCalls -= 1
            await withCheckedContinuation { continuation in
                gate.append(continuation)
                let ready = gateWatchers.filter { $0.count <= gate.count }
                gateWatchers.removeAll { $0.count <= gate.count }
                for watcher in ready { watcher.continuation.resume() }
            }
        }
        if !failures.isEmpty { throw failures.removeFirst() }
    }
}
