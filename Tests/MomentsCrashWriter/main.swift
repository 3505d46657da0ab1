// Writes timelines in a loop until killed, for the crash-safety tests.
//
//   MomentsCrashWriter sqlite|json PATH USERS [FIRST-VERSION] [--store]
//
// Plain mode saves timelines straight into the persistence. With --store, a
// MomentsStore refreshes timelines from an in-process service and likes and unlikes
// moments between refreshes. After each save or refresh returns, the writer prints
// "<user> <version>" unbuffered, so the parent knows what was committed before SIGKILL.
import Foundation
import Moments
import MomentsSQLite
import MomentsTestSupport

/// Serves `CrashTimeline`s with a rising version, keeping likes across versions.
actor CrashService: MomentsService {
    private var version: Int
    private var current: [String: Int] = [:]
    private var liked: [String: Set<String>] = [:]

    init(firstVersion: Int) { version = firstVersion }

    func getMoments(userID: String) -> MomentsDetails {
        version += 1
        current[userID] = version
        return timeline(userID)
    }

    func updateLike(_ isLiked: Bool, momentID: String, fromUserID userID: String) -> MomentsDetails {
        if isLiked { liked[userID, default: []].insert(momentID) } else { liked[userID]?.remove(momentID) }
        return timeline(userID)
    }

    private func timeline(_ userID: String) -> MomentsDetails {
        var details = CrashTimeline.make(user: userID, version: current[userID] ?? version)
        let likes = liked[userID] ?? []
        details.moments = details.moments.map { moment in
            var moment = moment
            moment.isLiked = likes.contains(moment.id)
            moment.likes = likes.contains(moment.id) ? [Moment.LikedUser(id: userID, avatar: "a")] : []
            return moment
        }
        return details
    }
}

let arguments = CommandLine.arguments
guard arguments.count >= 4, let users = Int(arguments[3]) else {
    FileHandle.standardError.write(Data("usage: MomentsCrashWriter sqlite|json PATH USERS [FIRST-VERSION] [--store]\n".utf8))
    exit(2)
}
let persistence: any MomentsPersistence
do {
    switch arguments[1] {
    case "sqlite": persistence = try SQLitePersistence(path: arguments[2])
    case "json": persistence = try JSONFilePersistence(directory: URL(fileURLWithPath: arguments[2]))
    default: exit(2)
    }
} catch {
    FileHandle.standardError.write(Data("open failed: \(error)\n".utf8))
    exit(1)
}
var version = Int(arguments.count > 4 ? arguments[4] : "1") ?? 1

if arguments.contains("--store") {
    let store = MomentsStore(service: CrashService(firstVersion: version), persistence: persistence)
    var round = 0
    while true {
        round += 1
        let user = "user-\(round % users)"
        let details = try await store.refresh(userID: user)
        guard let committed = CrashTimeline.version(of: details, user: user, ignoringLikes: true) else { exit(3) }
        FileHandle.standardOutput.write(Data("\(user) \(committed)\n".utf8))
        for _ in 0..<2 {
            let moment = details.moments.randomElement()?.id ?? "m0"
            try await store.setLike(Bool.random(), momentID: moment, userID: user)
        }
    }
} else {
    while true {
        let user = "user-\(version % users)"
        try await persistence.save(CrashTimeline.make(user: user, version: version), for: user)
        FileHandle.standardOutput.write(Data("\(user) \(version)\n".utf8))
        version += 1
    }
}
