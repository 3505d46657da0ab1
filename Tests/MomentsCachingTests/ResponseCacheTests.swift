import Foundation
import MomentsNetworking
import MomentsTestSupport
import Testing
import MomentsCaching
import MomentsHTTP

private func entry(_ body: String, ttl: Duration = .seconds(60)) -> CachedResponse {
    CachedResponse(HTTPResponse(statusCode: 200, headers: ["ETag": "x"], body: Data(body.utf8)), timeToLive: ttl)
}

private func key(_ name: String) -> CacheKey {
    CacheKey(HTTPRequest(method: .get, url: URL(string: "https://x.test/\(name)")!))
}

@Suite struct ResponseCacheTests {
    @Test func memoryEvictsLeastRecentlyUsedByCount() {
        let cache = MemoryResponseCache(countLimit: 10)
        for index in 0..<10 { cache.store(entry("v\(index)"), for: key("\(index)")) }
        _ = cache.cachedResponse(for: key("0"))

        cache.store(entry("new"), for: key("new"))

        #expect(cache.count <= 10)
        #expect(cache.cachedResponse(for: key("0")) != nil, "recently used survives")
        #expect(cache.cachedResponse(for: key("1")) == nil, "least recently used goes")
        #expect(cache.cachedResponse(for: key("new")) != nil)
    }

    @Test func memoryStaysWithinItsCostLimit() {
        let cache = MemoryResponseCache(countLimit: 1000, costLimit: 10_000)
        for index in 0..<100 { cache.store(entry(String(repeating: "x", count: 500)), for: key("\(index)")) }

        #expect(cache.totalCost <= 10_000)
        #expect(cache.cachedResponse(for: key("99")) != nil)
        cache.store(entry(String(repeating: "y", count: 20_000)), for: key("huge"))
        #expect(cache.cachedResponse(for: key("huge")) == nil, "an entry over the whole limit is not kept")
    }

    @Test func diskSurvivesReopeningAndKeepsEveryField() async throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let stored = entry("persisted")
        try await DiskResponseCache(directory: directory.url).store(stored, for: key("a"))

        let reopened = try DiskResponseCache(directory: directory.url)

        let loaded = await reopened.cachedResponse(for: key("a"))
        #expect(loaded?.body == stored.body)
        #expect(loaded?.response.headers["etag"] == "x")
        #expect(loaded.map { abs($0.expiresAt.timeIntervalSince(stored.expiresAt)) < 0.001 } == true)
    }

    @Test func diskEvictsBeyondItsByteLimit() async throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let cache = try DiskResponseCache(directory: directory.url, byteLimit: 20_000)
        for index in 0..<40 { await cache.store(entry(String(repeating: "z", count: 1_000)), for: key("\(index)")) }

        #expect(await cache.size <= 20_000)
        #expect(await cache.cachedResponse(for: key("39")) != nil)
        #expect(await cache.cachedResponse(for: key("0")) == nil)
        let files = try FileManager.default.contentsOfDirectory(atPath: directory.url.path)
        #expect(files.filter { $0.hasSuffix(".response") }.count == (await cache.count))
    }

    @Test func aDamagedDiskEntryIsAMissAndIsRemoved() async throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let cache = try DiskResponseCache(directory: directory.url)
        await cache.store(entry("fine"), for: key("a"))
        try Data("garbage".utf8).write(to: directory.url.appendingPathComponent(key("a").rawValue + ".response"))

        #expect(await cache.cachedResponse(for: key("a")) == nil)
        #expect(await cache.count == 0)
    }

    @Test func tieredReadsMemoryThenDiskAndPromotes() async throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let memory = MemoryResponseCache()
        let disk = try DiskResponseCache(directory: directory.url)
        let tiered = TieredResponseCache(memory: memory, disk: disk)
        await disk.store(entry("from disk"), for: key("d"))

        #expect(await tiered.cachedResponse(for: key("d"))?.body == Data("from disk".utf8))
        #expect(memory.cachedResponse(for: key("d")) != nil, "promoted to memory")

        await tiered.store(entry("both"), for: key("b"))
        #expect(memory.cachedResponse(for: key("b")) != nil)
        #expect(await disk.cachedResponse(for: key("b")) != nil)
        try await tiered.clear()
        #expect(memory.count == 0)
        #expect(await disk.count == 0)
    }
}
