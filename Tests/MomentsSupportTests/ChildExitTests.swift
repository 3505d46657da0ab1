import Foundation
import MomentsSupport
import MomentsTestSupport
import Testing

/// `Process.waitForExit(timeout:)`: how a child ended, whether Foundation noticed it or
/// not, and a bound on the wait.
@Suite struct ChildExitTests {
    private static func start(_ script: String) throws -> Process {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/bin/sh")
        process.arguments = ["-c", script]
        try process.run()
        return process
    }

    @Test func anExitStatusAndASignalAreTold() async throws {
        let exited = try Self.start("exit 7")
        #expect(await exited.exit() == ChildExit(status: 7, bySignal: false))
        let killed = try Self.start("sleep 30")
        kill(killed.processIdentifier, SIGKILL)
        #expect(await killed.exit() == ChildExit(status: SIGKILL, bySignal: true))
    }

    @Test func aChildStillRunningAtTheTimeoutIsNil() throws {
        let sleeper = try Self.start("sleep 30")
        defer { sleeper.terminate() }
        #expect(sleeper.waitForExit(timeout: .milliseconds(50)) == nil)
    }
}
