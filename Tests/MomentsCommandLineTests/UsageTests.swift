import Foundation
@testable import MomentsCommandLine
import MomentsCSQLite
import MomentsNetworking
import MomentsTestSupport
import Testing
import MomentsHTTP

/// Help, versions, base URLs and error lines, as a newcomer meets them.
@Suite struct UsageTests {
    private func run(_ arguments: [String], environment: [String: String] = [:]) async -> (Int32, Console) {
        let console = Console(capturing: true)
        let status = await MomentsCommandLine.run(arguments, environment: environment, console: console)
        return (status, console)
    }

    @Test func helpForACommandAGroupAndTheVersion() async {
        let (helpStatus, help) = await run(["help", "timeline"])
        #expect(helpStatus == 0 && help.output.first?.hasPrefix("usage: moments timeline") == true)

        let (groupStatus, group) = await run(["cache", "--help"])
        #expect(groupStatus == 0 && group.output.joined().contains("usage: moments cache clear"))

        let (versionStatus, version) = await run(["--version"])
        #expect(versionStatus == 0 && version.output == ["moments \(MomentsCommandLine.version)"])

        let (_, overview) = await run(["help"])
        #expect(overview.output.joined().contains("(or $MOMENTS_CACHE_DIR, or --cache-dir)"), "no summary is cut mid-sentence")

        let (unknownStatus, unknown) = await run(["help", "nope"])
        #expect(unknownStatus == 2 && unknown.problems == ["moments: unknown command 'nope'; try 'moments help'"])
    }

    @Test func usageErrorsComeBeforeAnyIOAndNameTheAllowedRange() async throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let store = directory.url.appendingPathComponent("s.sqlite").path
        for (arguments, expected) in [
            (["timeline", "--user", "0", "--base-url", "http://127.0.0.1:99999"], "--base-url"),
            (["timeline", "--user", "0", "--base-url", "http://x", "--timeout", "-1"], "between 0 and 3600"),
            (["timeline", "--user", "0", "--user", "1", "--base-url", "http://x"], "given twice"),
            (["timeline", "--user", "0", "--base-url", "http://x", "--cache-policy", "sometimes"], "--cache-policy must be one of"),
            (["timeline", "--user", "0", "--base-url", "http://x", "--transport", "carrier-pigeon"], "--transport must be urlsession or curl"),
            (["timeline", "--user", "0", "--base-url", "http://x", "--transport", "urlsession", "--ca-file", "/etc/hostname"], "add --transport curl"),
            (["timeline", "--user", "0", "--base-url", "http://x", "--ca-file", "/nonexistent/ca.pem"], "is not a readable file"),
        ] {
            let (status, console) = await run(arguments + ["--store", "sqlite:" + store])
            #expect(status == 2, "\(arguments)")
            #expect(console.problems.count == 1 && console.problems.first?.contains(expected) == true, "\(console.problems)")
        }
        #expect(!FileManager.default.fileExists(atPath: store), "a usage error creates nothing")
    }

    @Test func aBaseURLEndingInGraphQLWorks() async throws {
        let bff = try await ReferenceBFF()
        defer { bff.stop() }
        let (status, console) = await run(["timeline", "--user", "0", "--store", "memory", "--base-url", bff.baseURL.absoluteString + "/graphql"])
        #expect(status == 0, "\(console.problems)")
        #expect(console.output.first == "Jake Lin (user 0): 4 moments")
    }

    @Test(arguments: [(["--transport", "curl"], [:]), ([], ["MOMENTS_TRANSPORT": "curl"]), (["--transport", "urlsession"], [:])])
    func eitherTransportFetchesTheTimeline(arguments: [String], environment: [String: String]) async throws {
        let bff = try await ReferenceBFF()
        defer { bff.stop() }
        let (status, console) = await run(
            ["timeline", "--user", "0", "--store", "memory", "--base-url", bff.baseURL.absoluteString] + arguments, environment: environment
        )
        #expect(status == 0, "\(console.problems)")
        #expect(console.output.first == "Jake Lin (user 0): 4 moments")
    }

    @Test func theCurlTransportSaysLibcurlsWordsWhenTheBFFIsDown() async throws {
        let (status, console) = await run(
            ["timeline", "--user", "0", "--store", "memory", "--base-url", "http://127.0.0.1:\(refusedLoopbackPort())", "--transport", "curl"]
        )
        #expect(status == 1)
        #expect(console.problems.first?.contains("connection refused") == true, "\(console.problems)")
        #expect(console.problems.first?.contains("curl error 7") == true, "\(console.problems)")
    }

    @Test func aFailingCommandLeavesNoStoreAndNoCacheBehind() async throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let store = directory.url.appendingPathComponent("new.sqlite").path
        let cache = directory.url.appendingPathComponent("cache").path
        let (status, console) = await run(
            // A refused connection fails at once; the long deadline only keeps a loaded
            // machine from turning it into a timeout.
            ["timeline", "--user", "0", "--store", "sqlite:" + store, "--base-url", "http://127.0.0.1:\(refusedLoopbackPort())", "--timeout", "60"],
            environment: ["MOMENTS_CACHE_DIR": cache]
        )
        #expect(status == 1)
        #expect(console.problems.first?.contains("cannot reach") == true, "\(console.problems)")
        #expect(try FileManager.default.contentsOfDirectory(atPath: directory.url.path).isEmpty)
    }

    /// A like the store could not record never reaches the BFF.
    @Test func aLikeIsNotSentWhenTheStoreCannotBeWritten() async throws {
        let bff = try await ReferenceBFF()
        defer { bff.stop() }
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let store = "sqlite:" + directory.url.appendingPathComponent("s.sqlite").path
        let (fetched, _) = await run(["timeline", "--user", "0", "--store", store, "--base-url", bff.baseURL.absoluteString])
        #expect(fetched == 0)
        struct Stats: Decodable { let requests: Int }
        let stats = Endpoint<Stats>(.get, "/__stats")
        let client = HTTPClient.patient(baseURL: bff.baseURL)
        let before = try await client.send(stats).requests

        // Another process holds the write lock for the whole attempt.
        var db: OpaquePointer?
        #expect(sqlite3_open(directory.url.appendingPathComponent("s.sqlite").path, &db) == SQLITE_OK)
        defer { sqlite3_close(db) }
        #expect(sqlite3_exec(db, "BEGIN IMMEDIATE", nil, nil, nil) == SQLITE_OK)
        let (status, console) = await run(["like", "--user", "0", "--moment", "1", "--store", store, "--base-url", bff.baseURL.absoluteString])
        sqlite3_exec(db, "ROLLBACK", nil, nil, nil)

        #expect(status == 1)
        #expect(console.problems.count == 1 && console.problems.first?.contains("is in use by another process") == true, "\(console.problems)")
        #expect(try await client.send(stats).requests == before, "the BFF was contacted")
    }

    /// A damaged store, met through the CLI: one line saying so, and a refresh repairs it.
    @Test func aDamagedStoreIsOneLineAndARefreshRepairsIt() async throws {
        let bff = try await ReferenceBFF()
        defer { bff.stop() }
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let path = directory.url.appendingPathComponent("s.sqlite").path
        let online = ["timeline", "--user", "0", "--store", "sqlite:" + path, "--base-url", bff.baseURL.absoluteString]
        #expect(await run(online).0 == 0)

        var bytes = try Data(contentsOf: URL(fileURLWithPath: path))
        let offset = try #require(bytes.firstRange(of: Data("Swift on the server".utf8))).lowerBound + 2
        bytes[offset] ^= 0x01
        try bytes.write(to: URL(fileURLWithPath: path))

        let (status, console) = await run(["timeline", "--user", "0", "--store", "sqlite:" + path, "--offline"])
        #expect(status == 1)
        let line = try #require(console.problems.first)
        #expect(console.problems.count == 1 && line.hasPrefix("moments: the store at \(path) is damaged"), "\(line)")

        #expect(await run(online).0 == 0)
        let (repaired, offline) = await run(["timeline", "--user", "0", "--store", "sqlite:" + path, "--offline"])
        #expect(repaired == 0 && offline.output.first == "Jake Lin (user 0): 4 moments")
    }

    @Test func storageAndAuthenticationErrorsSpeakTheUsersLanguage() async throws {
        let bff = try await ReferenceBFF(token: "right")
        defer { bff.stop() }
        let (storeStatus, storeConsole) = await run(["like", "--user", "0", "--moment", "1", "--store", "sqlite:/nonexistent/dir/x.sqlite", "--base-url", bff.baseURL.absoluteString])
        let storeLine = try #require(storeConsole.problems.first)
        #expect(storeStatus == 1)
        #expect(storeLine.hasPrefix("moments: cannot use the store at /nonexistent/dir/x.sqlite"), "\(storeLine)")
        for jargon in ["PersistenceError", "SQLite error", "while executing", "INSERT"] { #expect(!storeLine.contains(jargon), "\(storeLine)") }

        let (authStatus, authConsole) = await run(["timeline", "--user", "0", "--store", "memory", "--base-url", bff.baseURL.absoluteString])
        let authLine = try #require(authConsole.problems.first)
        #expect(authStatus == 1)
        #expect(authLine.contains("--token"), "\(authLine)")
        #expect(!authLine.contains("HTTPClientError"), "\(authLine)")

        let (verboseStatus, verbose) = await run(["timeline", "--user", "0", "--store", "memory", "--verbose", "--base-url", bff.baseURL.absoluteString])
        #expect(verboseStatus == 1, "\(verbose.problems)")
        #expect(verbose.problems.contains { $0.contains("HTTPClientError") }, "--verbose adds the detail: \(verbose.problems)")
    }
}
