public import Foundation
public import Moments

/// Runs `MomentsCrashWriter`, kills it with SIGKILL at a random moment, and checks that
/// the storage reopens holding, for every user, a whole timeline at least as new as the
/// last save the writer reported.
public enum CrashHarness {
    public struct Failure: Error, CustomStringConvertible {
        public let description: String
    }

    /// The writer executable, built beside the test bundle.
    public static var writerURL: URL {
        URL(fileURLWithPath: CommandLine.arguments[0]).deletingLastPathComponent().appendingPathComponent("MomentsCrashWriter")
    }

    /// `count` rounds through a `MomentsStore` (refreshes and likes), each killed at a
    /// random moment; returns the saves reported in all.
    public static func storeRounds(
        _ count: Int, kind: String, path: String, open: () throws -> any MomentsPersistence
    ) async throws -> Int {
        var committed = 0
        for round in 0..<count {
            committed += try await Self.round(kind: kind, path: path, users: 5, startVersion: 1 + round * 100_000,
                                              window: 20...150, throughStore: true, open: open)
        }
        return committed
    }

    /// One round: start the writer on `kind` storage at `path`, let it run for a random
    /// while in `window`, kill it, reopen with `open`, and verify.
    /// Returns how many saves the writer reported.
    public static func round(
        kind: String,
        path: String,
        users: Int,
        startVersion: Int,
        window: ClosedRange<Int> = 30...250,
        throughStore: Bool = false,
        open: () throws -> any MomentsPersistence
    ) async throws -> Int {
        let process = Process()
        process.executableURL = writerURL
        process.arguments = [kind, path, String(users), String(startVersion)] + (throughStore ? ["--store"] : [])
        let output = Pipe()
        process.standardOutput = output
        try process.run()
        try await Task.sleep(for: .milliseconds(Int.random(in: window)))
        kill(process.processIdentifier, SIGKILL)
        process.waitUntilExit()
        guard process.terminationReason == .uncaughtSignal else {
            throw Failure(description: "the writer exited by itself with status \(process.terminationStatus)")
        }
        let text = String(decoding: output.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        var committed: [String: Int] = [:]
        for line in text.split(separator: "\n") {
            let parts = line.split(separator: " ")
            if parts.count == 2, let version = Int(parts[1]) { committed[String(parts[0])] = version }
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
        }
        return committed.count
    }
}
