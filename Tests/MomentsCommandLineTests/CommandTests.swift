import Foundation
import Moments
import MomentsNetworking
@testable import MomentsCommandLine
import MomentsTestSupport
import Testing
import MomentsHTTP
import MomentsBFF

/// Commands run in-process against the reference BFF, output captured.
@Suite(.serialized) struct CommandTests {
    let bff: ReferenceBFF
    let directory: TemporaryDirectory

    init() async throws {
        bff = try await ReferenceBFF()
        directory = try TemporaryDirectory()
    }

    /// Runs in-process; the answer cache goes to the test's directory, not the working one.
    private func run(_ arguments: [String], environment: [String: String] = [:]) async -> (Int32, Console) {
        let console = Console(capturing: true)
        var environment = environment
        environment["MOMENTS_CACHE_DIR"] = environment["MOMENTS_CACHE_DIR"] ?? directory.url.appendingPathComponent("answers").path
        let status = await MomentsCommandLine.run(arguments, environment: environment, console: console)
        return (status, console)
    }

    private var store: String { "sqlite:" + directory.url.appendingPathComponent("cli.sqlite").path }

    @Test func timelinePrintsAndStoresTheTimeline() async throws {
        defer { bff.stop(); directory.remove() }
        let (status, console) = await run(["timeline", "--user", "0", "--store", store], environment: ["MOMENTS_BASE_URL": bff.baseURL.absoluteString])

        #expect(status == 0)
        #expect(console.output.first == "Jake Lin (user 0): 4 moments")
        #expect(console.output.contains { $0.contains("“東京の夜 🌃 — café”") })
        #expect(console.problems.isEmpty)

        bff.stop()
        let (offlineStatus, offline) = await run(["timeline", "--user", "0", "--store", store, "--offline", "--json"])
        #expect(offlineStatus == 0)
        let json = try JSONSerialization.jsonObject(with: Data(offline.output.joined().utf8)) as? [String: Any]
        #expect((json?["moments"] as? [Any])?.count == 4)
    }

    @Test func likeAndUnlikeReportTheConfirmedMoment() async throws {
        defer { bff.stop(); directory.remove() }
        let base = ["--user", "0", "--moment", "1", "--base-url", bff.baseURL.absoluteString, "--store", store]

        let (liked, likeOutput) = await run(["like"] + base)
        let (unliked, unlikeOutput) = await run(["unlike"] + base + ["--json"])

        #expect(liked == 0)
        #expect(likeOutput.output.first == "liked moment [1] as user 0:")
        #expect(likeOutput.output.contains { $0.contains("♥ [1]") })
        #expect(unliked == 0)
        #expect(unlikeOutput.output.joined().contains(#""isLiked" : false"#))
    }

    /// `--retries` retries reads: a like the BFF answered 503 is not sent again (the BFF
    /// may have applied it; the store asks it with a read instead), and the failure is told.
    @Test func aLikeIsSentOnceWhateverRetriesSays() async throws {
        defer { bff.stop(); directory.remove() }
        struct Stats: Decodable { let mutations: Int }
        let stats = HTTPClient.patient(baseURL: bff.baseURL, transport: URLSessionTransport())
        try await bff.injectFault(["kind": "status", "status": 503, "count": 5])
        let before = try await stats.send(Endpoint<Stats>(.get, "/__stats")).mutations
        let (status, console) = await run(["like", "--user", "0", "--moment", "1", "--base-url", bff.baseURL.absoluteString,
                                           "--store", store, "--retries", "3"])
        let after = try await stats.send(Endpoint<Stats>(.get, "/__stats")).mutations
        #expect(status == 1)
        #expect(console.problems.count == 1, "\(console.problems)")
        #expect(after - before == 1, "the BFF received the like \(after - before) times")
    }

    /// `--cache-policy` reaches the store's refresh: `local-or-remote` answers a second
    /// `timeline` from the answer cache without asking the BFF, and `local` answers once
    /// the BFF is gone.
    @Test func cachePolicyDecidesWhereTheTimelineComesFrom() async throws {
        defer { bff.stop(); directory.remove() }
        struct Stats: Decodable { let requests: Int }
        let stats = HTTPClient.patient(baseURL: bff.baseURL, transport: URLSessionTransport())
        let base = ["timeline", "--user", "0", "--base-url", bff.baseURL.absoluteString, "--store", store, "--json"]

        let (first, _) = await run(base + ["--cache-policy", "local-or-remote"])
        let before = try await stats.send(Endpoint<Stats>(.get, "/__stats")).requests
        let (second, secondOutput) = await run(base + ["--cache-policy", "local-or-remote"])
        let after = try await stats.send(Endpoint<Stats>(.get, "/__stats")).requests
        #expect(first == 0)
        #expect(second == 0, "\(secondOutput.problems)")
        #expect(after == before, "the BFF was asked \(after - before) times for a timeline the cache held")

        bff.stop()
        let (offline, offlineOutput) = await run(base + ["--cache-policy", "local"])
        #expect(offline == 0, "\(offlineOutput.problems)")
        let json = try JSONSerialization.jsonObject(with: Data(offlineOutput.output.joined().utf8)) as? [String: Any]
        #expect((json?["moments"] as? [Any])?.count == 4)
    }

    @Test func anUnreachableBFFIsOneLineAndStatus1() async throws {
        defer { bff.stop(); directory.remove() }
        let (status, console) = await run(["timeline", "--user", "0", "--store", store, "--base-url", "http://127.0.0.1:\(refusedLoopbackPort())", "--timeout", "2"])

        #expect(status == 1)
        #expect(console.problems.count == 1)
        #expect(console.problems.first?.hasPrefix("moments: cannot reach http://127.0.0.1:") == true)
        #expect(console.problems.first?.contains("connection refused") == true)
    }

    /// A 5,000-moment timeline from a server whose `isLiked` disagrees with `likes` (one
    /// value per moment, as the public BFF keeps it): `moments timeline` shows the
    /// server's `isLiked` for every moment, never one derived from `likes`.
    @Test func aTimelineShowsTheServersIsLikedWhereItDisagreesWithLikes() async throws {
        defer { bff.stop(); directory.remove() }
        let global = try await ReferenceBFF(users: 1, momentsPerUser: 5_000, globalIsLiked: true)
        defer { global.stop() }
        let (status, console) = await run(["timeline", "--user", "user-1", "--store", store, "--base-url", global.baseURL.absoluteString, "--json"])
        #expect(status == 0, "\(console.problems)")
        let shown = try JSONDecoder().decode(MomentsDetails.self, from: Data(console.output.joined().utf8))
        let truth = try await GraphQLMomentsService(baseURL: global.baseURL).getMoments(userID: "user-1")
        #expect(shown.moments.count == 5_001)
        #expect(shown.moments.map(\.isLiked) == truth.moments.map(\.isLiked))
        // The first moment is liked by user 0 alone, and the server says user-1 likes it.
        #expect(shown.moments.first?.isLiked == true)
        #expect(shown.moments.first?.likes?.map(\.id) == ["0"])
        // Read back from the store, it is the same.
        let (_, offline) = await run(["timeline", "--user", "user-1", "--store", store, "--offline", "--json"])
        #expect(try JSONDecoder().decode(MomentsDetails.self, from: Data(offline.output.joined().utf8)) == shown)
    }

    /// `--retries` and `--no-hedge` shape the client: a 503 is retried as often as
    /// asked, and no more.
    @Test func retriesAndNoHedgeShapeTheClient() async throws {
        defer { bff.stop(); directory.remove() }
        try await bff.injectFault(["kind": "status", "status": 503, "count": 2])
        let (failed, failure) = await run(["timeline", "--user", "0", "--store", "memory", "--base-url", bff.baseURL.absoluteString, "--retries", "0", "--no-hedge"])
        #expect(failed == 1)
        #expect(failure.problems.first?.contains("503 Service Unavailable") == true, "\(failure.problems)")
        // One 503 left: one retry gets past it.
        let (status, console) = await run(["timeline", "--user", "0", "--store", "memory", "--base-url", bff.baseURL.absoluteString, "--retries", "1", "--no-hedge"])
        #expect(status == 0, "\(console.problems)")
    }

    /// `TRACEPARENT` in the environment is continued: the request carries its trace id
    /// and a span of its own; `--verbose` prints each request with that trace id, and
    /// `--metrics` the run's figures in Prometheus' text format.
    @Test func theEnvironmentsTraceIsContinuedAndShown() async throws {
        defer { bff.stop(); directory.remove() }
        let traceID = "0af7651916cd43dd8448eb211c80319c"
        let (status, console) = await run(
            ["timeline", "--user", "0", "--store", "memory", "--base-url", bff.baseURL.absoluteString, "--verbose", "--metrics"],
            environment: ["TRACEPARENT": "00-\(traceID)-b7ad6b7169203331-01"]
        )
        #expect(status == 0, "\(console.problems)")
        struct Stats: Decodable { let lastTraceparent: String? }
        let stats = try await HTTPClient.patient(baseURL: bff.baseURL, transport: URLSessionTransport()).send(Endpoint<Stats>(.get, "/__stats"))
        let sent = stats.lastTraceparent ?? ""
        #expect(sent.hasPrefix("00-\(traceID)-") && !sent.contains("b7ad6b7169203331"), "\(sent)")
        #expect(console.problems.contains { $0.contains("POST") && $0.contains("trace \(traceID)") }, "\(console.problems)")
        #expect(console.problems.contains { $0.contains("http_client_request_duration_seconds_count") }, "\(console.problems)")
    }

    @Test func aRefusedTokenNamesTheStatusAndTheURL() async throws {
        defer { bff.stop(); directory.remove() }
        let guarded = try await ReferenceBFF(token: "right-token")
        defer { guarded.stop() }
        let (status, console) = await run(["timeline", "--user", "0", "--store", "memory", "--base-url", guarded.baseURL.absoluteString, "--token", "wrong-token"])
        #expect(status == 1)
        let line = console.problems.first ?? ""
        #expect(line.contains("401 Unauthorized") && line.contains("/graphql"), "\(line)")
        #expect(!line.contains("wrong-token"))
    }

    @Test func wrongArgumentsAreOneLineAndStatus2() async throws {
        defer { bff.stop(); directory.remove() }
        for arguments in [["timeline"], ["timeline", "--user", "0"], ["timeline", "--user", "0", "--base-url", "ftp://x"], ["watch", "--user", "0", "--interval", "-1", "--base-url", "http://x"],
                          ["watch", "--json", "--base-url", "http://x"], ["timeline", "--user", "0", "--user", "1", "--base-url", "http://x"],
                          ["timeline", "--user", "0", "--base-url", "http://x", "--retries", "11"], ["timeline", "--user", "0", "--base-url", "http://x", "--retries", "-1"]] {
            let (status, console) = await run(arguments)
            #expect(status == 2, "\(arguments)")
            #expect(console.problems.count == 1)
            #expect(console.output.isEmpty)
        }
    }

    @Test func anUnknownMomentFails() async throws {
        defer { bff.stop(); directory.remove() }
        let (status, console) = await run(["like", "--user", "0", "--moment", "nope", "--base-url", bff.baseURL.absoluteString, "--store", store])

        #expect(status == 1)
        #expect(console.problems == ["moments: moment nope is not in user 0's timeline"])
    }

    @Test func cacheClearRemovesCachedAnswers() async throws {
        defer { bff.stop(); directory.remove() }
        let cache = directory.url.appendingPathComponent("cache").path
        let first = await run(["cache", "clear", "--cache-dir", cache])
        #expect(first.0 == 0)
        #expect(first.1.output.first?.contains("already empty") == true)
        try FileManager.default.createDirectory(atPath: cache, withIntermediateDirectories: true)
        try Data("{}".utf8).write(to: URL(fileURLWithPath: cache + "/" + String(repeating: "a", count: 64) + ".response"))

        let (status, console) = await run(["cache", "clear", "--cache-dir", cache])

        #expect(status == 0)
        #expect(console.output.first?.hasPrefix("removed 1 cached answer") == true)
        #expect(try FileManager.default.contentsOfDirectory(atPath: cache).filter { $0.hasSuffix(".response") }.isEmpty)
    }
}
