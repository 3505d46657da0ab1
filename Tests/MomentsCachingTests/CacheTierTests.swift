import Foundation
import MomentsNetworking
import MomentsTestSupport
import Testing
import MomentsCaching
import MomentsHTTP

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

    /// Entries older than the maximum age go in the background, without a lookup: the
    /// purge runs every `purgeInterval`. (The test waits for the cache to report them
    /// gone, not for a length of time.)
    @Test func expiredEntriesArePurgedInTheBackground() async throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let cache = try DiskResponseCache(directory: directory.url, maximumAge: .milliseconds(200), purgeInterval: .milliseconds(50))
        for index in 0..<300 { await cache.store(entry(storedDaysAgo: 0), for: CacheKey(rawValue: "k\(index)")) }
        #expect(await eventually(timeout: .seconds(30)) { await cache.count == 0 })
        #expect(try responseFiles(directory.url).isEmpty)
        #expect(await cache.size == 0)
    }

    @Test func purgingNowRemovesOnlyWhatHasExpired() async throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let writer = try DiskResponseCache(directory: directory.url)
        for name in ["old", "new"] { await writer.store(entry(storedDaysAgo: 0), for: CacheKey(rawValue: name)) }
        try FileManager.default.setAttributes([.modificationDate: Date().addingTimeInterval(-2 * 3_600)],
                                              ofItemAtPath: directory.url.appendingPathComponent("old.response").path)
        // Opened with a day's age (both kept), then purged against an hour's.
        _ = try DiskResponseCache(directory: directory.url, maximumAge: .seconds(86_400))
        let cache = try DiskResponseCache(directory: directory.url, maximumAge: .seconds(3_600), purgeInterval: .seconds(3_600))
        #expect(await cache.count == 1, "the old entry was already removed when the cache opened")
        await cache.purgeExpired()
        #expect(try responseFiles(directory.url) == ["new.response"])
    }
}
