// Writes timelines in a loop until killed, for the crash-safety tests.
//
//   MomentsCrashWriter sqlite|json PATH USERS [SEED]
//
// After each save returns, writes "<user> <version>" unbuffered, so the parent knows
// what was committed before it sent SIGKILL.
import Foundation
import Moments
import MomentsSQLite
import MomentsTestSupport

let arguments = CommandLine.arguments
guard arguments.count >= 4, let users = Int(arguments[3]) else {
    FileHandle.standardError.write(Data("usage: MomentsCrashWriter sqlite|json PATH USERS [SEED]\n".utf8))
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
while true {
    let user = "user-\(version % users)"
    try await persistence.save(CrashTimeline.make(user: user, version: version), for: user)
    FileHandle.standardOutput.write(Data("\(user) \(version)\n".utf8))
    version += 1
}
