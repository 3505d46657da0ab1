public import Foundation
public import Moments
import MomentsSupport

/// Runs `MomentsCrashWriter`, kills it with SIGKILL at a point chosen from the progress
/// it reports (after a number of commits, or in the middle of the next one), and checks
/// that the storage reopens holding, for every user, a whole timeline at least as new as
/// the last commit the writer reported.
///
/// Kill points depend on progress, never on wall-clock delays, so a loaded machine
/// changes how long a round takes, not what it tests.
public enum CrashHarness {
    public struct Failure: Error, CustomStringConvertible {
        public let description: String
    }

    /// The writer executable, built beside the test bundle.
    public static var writerURL: URL {
        URL(fileURLWithPath: CommandLine.arguments[0]).deletingLastPathComponent().appendingPathComponent("MomentsCrashWriter")
    }

    /// `count` rounds through a `MomentsStore` (refreshes and likes), each killed at a
    /// progress point drawn from `seed`; returns the commits reported in all.
    public static func storeRounds(
        _ count: Int, kind: String, path: String, seed: UInt64 = 1, open: () throws -> any MomentsPersistence
    ) async throws -> Int {
        var committed = 0
        var generator = SeededGenerator(seed: seed)
        for round in 0..<count {
            committed += try await Self.round(kind: kind, path: path, users: 5, startVersion: 1 + round * 100_000,
                                              throughStore: true, using: &generator, open: open)
        }
        return committed
    }

    /// One round: start the writer on `kind` storage at `path`, kill it after 1 to 40
    /// commits (at random, from `generator`) or in the middle of the commit after them,
    /// reopen with `open`, and verify. Returns how many commits the writer reported.
    public static func round(
        kind: String,
        path: String,
        users: Int,
        startVersion: Int,
        throughStore: Bool = false,
        using generator: inout SeededGenerator,
        open: () throws -> any MomentsPersistence
    ) async throws -> Int {
        let commitsBeforeKill = Int.random(in: 1...40, using: &generator)
        let killMidCommit = Bool.random(using: &generator)
        let process = Process()
        process.discardingCoverageProfile()
        process.executableURL = writerURL
        process.arguments = [kind, path, String(users), String(startVersion)] + (throughStore ? ["--store"] : [])
        let output = Pipe()
        process.standardOutput = output
        try process.run()
        let reader = LineReader(output.fileHandleForReading)
        var committed: [String: Int] = [:]
        var commits = 0
        var killed = false
        for await line in reader.lines {
            if line.hasPrefix("> ") {
                if !killed, killMidCommit, commits >= commitsBeforeKill {
                    kill(process.processIdentifier, SIGKILL)
                    killed = true
                }
                continue
            }
            let parts = line.split(separator: " ")
            guard parts.count == 2, let version = Int(parts[1]) else { continue }
            committed[String(parts[0])] = version
            commits += 1
            if !killed, !killMidCommit, commits >= commitsBeforeKill {
                kill(process.processIdentifier, SIGKILL)
                killed = true
            }
        }
        let ended = await process.exit()
        guard ended.bySignal else {
            throw Failure(description: "the writer exited by itself with status \(ended.status)")
        }

        let persistence = try open()
        for (user, version) in committed {
            guard let details = try await persistence.load(userID: user) else {
                throw Failure(description: "\(user) is missing after the crash; version \(version) was committed")
            }
            guard let found = CrashTimeline.version(of: details, user: user, ignoringLikes: throughStore) else {
                throw Failure(description: "\(user)'s timeline is torn after the crash")
            }
            guard found >= version else {
                throw Failure(description: "\(user) holds version \(found) but \(version) was committed")
            }
        }
        for user in try await persistence.userIDs() {
            guard let details = try await persistence.load(userID: user),
                  CrashTimeline.version(of: details, user: user, ignoringLikes: throughStore) != nil else {
                throw Failure(description: "\(user)'s timeline is torn after the crash")
            }
            // Each moment holds a state the writer's server had: liked by its owner or not.
            for moment in details.moments where throughStore {
                let likers = moment.likes?.map(\.id) ?? []
                guard likers == [] || likers == [user], moment.isLiked == (likers == [user]) else {
                    throw Failure(description: "\(user)'s moment \(moment.id) holds likes \(likers) and isLiked \(String(describing: moment.isLiked)), a state the server never had")
                }
            }
        }
        if throughStore {
            // The next refresh converges on the server's state, whatever the crash left,
            // once it is certainly computed after every like's answer the rows keep: the
            // writer and this store each widen their intervals by half the clock-skew
            // tolerance, so that is a refresh starting more than the tolerance after the
            // writer's last answer (a rule of the wall clock, not a guess at an event).
            try await Task.sleep(for: MomentsStore.Configuration().clockSkewTolerance + .milliseconds(1))
            let service = ConvergingService(version: startVersion + 99_999)
            let store = MomentsStore(service: service, persistence: persistence)
            for user in try await persistence.userIDs() {
                let refreshed = try await store.refresh(userID: user)
                guard refreshed == service.timeline(user), try await persistence.load(userID: user) == refreshed else {
                    throw Failure(description: "a refresh of \(user) after the crash did not converge")
                }
            }
            await store.shutdown()
        }
        // The next round's writer opens the storage again (a JSON-file store is one
        // process's at a time).
        await persistence.close()
        return committed.count
    }
}

/// Serves every user the timeline of one version, without likes: what a refresh after a
/// crash must converge on.
struct ConvergingService: MomentsService {
    let version: Int

    func timeline(_ userID: String) -> MomentsDetails {
        var details = CrashTimeline.make(user: userID, version: version)
        details.moments = details.moments.map { moment in
            var moment = moment
            moment.isLiked = false
            moment.likes = []
            return moment
        }
        return details
    }

    func getMoments(userID: String) -> MomentsDetails { timeline(userID) }

    func updateLike(_ isLiked: Bool, momentID: String, fromUserID userID: String) -> MomentsDetails { timeline(userID) }
}
