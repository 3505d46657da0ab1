// Writes timelines in a loop until killed, for the crash-safety tests.
//
//   MomentsCrashWriter sqlite|json PATH USERS [FIRST-VERSION] [--store]
//   MomentsCrashWriter sqlite|json PATH --file-size-limit BYTES
//
// Plain mode saves timelines straight into the persistence. With --store, a
// MomentsStore refreshes timelines from an in-process service and likes and unlikes
// moments between refreshes. Before each save or refresh the writer prints "> <user>",
// and after it returns "<user> <version>", unbuffered, so the parent knows what was
// committed, and can kill it in the middle of a commit.
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

/// Makes every file write past `bytes` fail with EFBIG (instead of killing the process
/// with SIGXFSZ), as on a full disk. Returns whether the limit is set.
func limitFileSize(to bytes: Int) -> Bool {
    signal(SIGXFSZ, SIG_IGN)
    var limit = rlimit(rlim_cur: rlim_t(bytes), rlim_max: rlim_t(bytes))
    return setrlimit(Int32(RLIMIT_FSIZE.rawValue), &limit) == 0
}

/// The persistence of `kind` (`sqlite` or `json`) at `path`.
func openPersistence(_ kind: String, at path: String) throws -> any MomentsPersistence {
    kind == "sqlite" ? try SQLitePersistence(path: path) : try JSONFilePersistence(directory: URL(fileURLWithPath: path))
}

/// With a file-size limit, writes fail part-way as they do on a full disk: the writer
/// saves a small timeline, then one too large to fit, and reports what happened.
func writeUntilFull(kind: String, path: String, limit: Int) async -> Int32 {
    guard limitFileSize(to: limit) else { return 4 }
    do {
        let persistence = try openPersistence(kind, at: path)
        try await persistence.save(SampleTimelines.timeline(user: "u", moments: 2), for: "u")
        FileHandle.standardOutput.write(Data("small saved\n".utf8))
        do {
            try await persistence.save(SampleTimelines.timeline(user: "u", moments: 20_000), for: "u")
            FileHandle.standardOutput.write(Data("large saved\n".utf8))
        } catch let error as PersistenceError {
            FileHandle.standardOutput.write(Data("large failed \(error.code)\n".utf8))
        }
        let loaded = try await persistence.load(userID: "u")
        let intact = loaded == SampleTimelines.timeline(user: "u", moments: 2)
        FileHandle.standardOutput.write(Data("small \(intact ? "intact" : "lost")\n".utf8))
        return 0
    } catch {
        FileHandle.standardOutput.write(Data("unexpected \(error)\n".utf8))
        return 5
    }
}

/// On a disk where nothing can grow (a file-size limit of 0), a store closed cleanly is
/// opened, read and written; reports each outcome.
func readWhenFull(kind: String, path: String) async -> Int32 {
    guard limitFileSize(to: 0) else { return 4 }
    let persistence: any MomentsPersistence
    do {
        persistence = try openPersistence(kind, at: path)
    } catch {
        FileHandle.standardOutput.write(Data("open failed \(error)\n".utf8))
        return 0
    }
    do {
        let loaded = try await persistence.load(userID: "u")
        FileHandle.standardOutput.write(Data("read \(loaded?.moments.count ?? -1) moments\n".utf8))
    } catch {
        FileHandle.standardOutput.write(Data("read failed \(error)\n".utf8))
    }
    do {
        try await persistence.save(SampleTimelines.timeline(user: "u", moments: 3), for: "u")
        FileHandle.standardOutput.write(Data("save succeeded\n".utf8))
    } catch let error as PersistenceError {
        FileHandle.standardOutput.write(Data("save failed \(error.code)\n".utf8))
    } catch {
        FileHandle.standardOutput.write(Data("save failed untyped \(error)\n".utf8))
    }
    return 0
}

if arguments.count == 4, arguments[1] == "read-when-full" {
    exit(await readWhenFull(kind: arguments[2], path: arguments[3]))
}

if arguments.count == 5, arguments[3] == "--file-size-limit", let limit = Int(arguments[4]) {
    exit(await writeUntilFull(kind: arguments[1], path: arguments[2], limit: limit))
}

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
        FileHandle.standardOutput.write(Data("> \(user)\n".utf8))
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
        FileHandle.standardOutput.write(Data("> \(user)\n".utf8))
        try await persistence.save(CrashTimeline.make(user: user, version: version), for: user)
        FileHandle.standardOutput.write(Data("\(user) \(version)\n".utf8))
        version += 1
    }
}
