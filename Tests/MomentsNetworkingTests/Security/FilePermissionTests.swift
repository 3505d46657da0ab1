import Foundation
import MomentsNetworking
import MomentsTestSupport
import Testing
import MomentsCaching
import MomentsHTTP

/// Cached answers are authenticated data: the owner's only.
@Suite struct FilePermissionTests {
    @Test func theDiskCacheIsTheOwnersOnly() async throws {
        let parent = try TemporaryDirectory()
        defer { parent.remove() }
        let directory = parent.url.appendingPathComponent("cache/nested")
        let cache = try DiskResponseCache(directory: directory)
        await cache.store(CachedResponse(HTTPResponse(statusCode: 200, body: Data("{}".utf8)), timeToLive: .seconds(60)), for: CacheKey(rawValue: "k"))

        #expect(try permissions(of: directory) == 0o700)
        #expect(try permissions(of: parent.url.appendingPathComponent("cache")) == 0o700)
        let files = try FileManager.default.contentsOfDirectory(atPath: directory.path)
        #expect(files.count == 2) // the entry and the identity key
        for file in files {
            #expect(try permissions(of: directory.appendingPathComponent(file)) == 0o600, "\(file)")
        }
    }
}

func permissions(of url: URL) throws -> Int {
    let attributes = try FileManager.default.attributesOfItem(atPath: url.path)
    return ((attributes[.posixPermissions] as? NSNumber)?.intValue ?? -1) & 0o777
}
