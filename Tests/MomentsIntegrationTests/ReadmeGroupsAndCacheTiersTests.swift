import Foundation
import Moments
import MomentsNetworking
import MomentsTestSupport
import Testing
import MomentsObservability
import MomentsCaching
import MomentsHTTP
import MomentsBFF

/// The README's "Groups, cache tiers, raw bodies" example, as written there (its `print`
/// turned into expectations), against the reference BFF.
@Suite struct ReadmeGroupsAndCacheTiersTests {
    @Test func theExampleRunsAsWritten() async throws {
        let bff = try await ReferenceBFF()
        defer { bff.stop() }
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let bffURL = bff.baseURL
        let cacheURL = directory.url.appendingPathComponent("cache")
        let id = "ada"

        var configuration = HTTPClient.Configuration(baseURL: bffURL)
        configuration.cache = TieredResponseCache(
            memory: MemoryResponseCache(),
            disk: try DiskResponseCache(directory: cacheURL, byteLimit: 64 << 20, maximumAge: .seconds(3 * 86_400), clearOnStart: true)
        )
        configuration.logLevel = .debug
        configuration.logHandler = LogRecord.standardErrorHandler
        let client = HTTPClient(configuration: configuration)

        let avatar = Task { try await client.send(Endpoint<Data>(.get, "/avatars/\(segment: id)").options { $0.groups.insert("images") }) }
        client.cancelAll(in: "images")

        let answer = try await client.response(for: GetMomentsByUserID(userID: "0"))
        #expect(answer.value.moments.count == 4)
        #expect(answer.body.count > 100)

        try await client.clearCache()

        #expect((await avatar.result).error is HTTPClientError, "the image request was cancelled or refused, never answered")
        #expect(FileManager.default.fileExists(atPath: cacheURL.path))
    }
}
