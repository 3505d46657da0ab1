import Foundation
import MomentsNetworking
import MomentsTestSupport
import Testing

/// Each tier has its own expiry; a disk cache can start afresh.
@Suite struct CacheTierTests {
    private func entry(storedDaysAgo days: Double) -> CachedResponse {
        CachedResponse(HTTPResponse(statusCode: 200, body: Data("{}".utf8)), storedAt: Date().addingTimeInterval(-days * 86_400), timeToLive: .seconds(60))
    }

    private func responseFiles(_ directory: URL) throws -> [String] {
        try FileManager.default.contentsOfDirectory(atPath: directory.path).filter { $0.hasSuffix(".response") }
    }

    @Test func eachTierKeepsEntriesAsLongAsItsOwnMaximumAge() async throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let memory = MemoryResponseCache() // expiry: never
        let disk = try DiskResponseCache(directory: directory.url, maximumAge: .seconds(3 * 86_400))
        let key = CacheKey(rawValue: "old")
        memory.store(entry(storedDaysAgo: 4), for: key)
        await disk.store(entry(storedDaysAgo: 4), for: key)

        #expect(memory.cachedResponse(for: key) != nil)
        #expect(await disk.cachedResponse(for: key) == nil)
        #expect(try responseFiles(directory.url).isEmpty, "an expired disk entry is removed when met")

        let shortMemory = MemoryResponseCache(maximumAge: .seconds(60))
        shortMemory.store(entry(storedDaysAgo: 1), for: key)
        #expect(shortMemory.cachedResponse(for: key) == nil)
        #expect(shortMemory.count == 0)
    }

    @Test func expiredEntriesAreRemovedByAgeWhenTheCacheOpens() async throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let writer = try DiskResponseCache(directory: directory.url)
        await writer.store(entry(storedDaysAgo: 0), for: CacheKey(rawValue: "old"))
        await writer.store(entry(storedDaysAgo: 0), for: CacheKey(rawValue: "new"))
        let old = directory.url.appendingPathComponent("old.response")
        try FileManager.default.setAttributes([.modificationDate: Date().addingTimeInterval(-5 * 86_400)], ofItemAtPath: old.path)

        let reopened = try DiskResponseCache(directory: directory.url, maximumAge: .seconds(3 * 86_400))

        #expect(await reopened.count == 1)
        #expect(try responseFiles(directory.url) == ["new.response"])
    }

    @Test func clearOnStartBeginsEmpty() async throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        await (try DiskResponseCache(directory: directory.url)).store(entry(storedDaysAgo: 0), for: CacheKey(rawValue: "k"))

        let fresh = try DiskResponseCache(directory: directory.url, clearOnStart: true)

        #expect(await fresh.count == 0)
        #expect(try responseFiles(directory.url).isEmpty)
    }
}
