import MomentsSupport
public import MomentsNetworking
import Synchronization
public import Foundation

/// A `ResponseCache` in a directory, one file per entry, bounded in bytes, least
/// recently used evicted first. It survives restarts; entries past their expiry stay
/// until evicted, for `CachePolicy.remoteThenLocal`. A damaged file is a miss and is
/// removed.
///
/// The directory is created 0700 and every file 0600: entries are authenticated answers.
///
/// Its reads, writes and `fsync`s run on a thread of its own, never on Swift's
/// cooperative threads. With a `maximumAge`, expired entries are also purged every
/// `purgeInterval` in small batches, so lookups and stores go on meanwhile.
public actor DiskResponseCache: ResponseCache {
    private struct Entry {
        var size: Int
        var lastUse: UInt64
        /// When the entry was stored (its file's modification time for entries found
        /// when the cache opens).
        var stored: Date
    }

    private let executor: ThreadExecutor
    /// The cache's own thread: its file I/O never runs on Swift's cooperative threads.
    public nonisolated var unownedExecutor: UnownedSerialExecutor { executor.asUnownedSerialExecutor() }

    /// The directory holding the entries.
    package nonisolated let directory: URL
    /// The most bytes kept.
    package nonisolated let byteLimit: Int
    private var entries: [CacheKey: Entry] = [:]
    private var totalSize = 0
    private var clock: UInt64 = 0
    private let encoder = JSONEncoder()
    private let decoder = JSONDecoder()
    private static let suffix = ".response"
    private static let identityKeyName = ".identity-key"
    /// The key of the identity digests in this cache's keys, kept in the directory
    /// (0600) so every client sharing it computes the same keys.
    public nonisolated let identityKey: [UInt8]

    /// How long an entry is kept after it was stored, fresh or not; `nil` keeps it
    /// until evicted for space.
    package nonisolated let maximumAge: Duration?
    /// How often expired entries are purged, when there is a ``maximumAge``.
    package nonisolated let purgeInterval: Duration
    private nonisolated let purging = PThreadMutex<Task<Void, Never>?>(nil)

    /// Opens (creating if needed) a cache directory on a thread of its own, never on one
    /// of Swift's cooperative threads: opening lists and may remove many files. Use it
    /// from async code; it is ``init(directory:byteLimit:maximumAge:clearOnStart:purgeInterval:)``
    /// otherwise, with the same parameters.
    public static func open(
        directory: URL, byteLimit: Int = 64 * 1024 * 1024, maximumAge: Duration? = nil, clearOnStart: Bool = false,
        purgeInterval: Duration = .seconds(600)
    ) async throws -> DiskResponseCache {
        try await runOffThePool(named: "MomentsDiskResponseCache.open") {
            try DiskResponseCache(directory: directory, byteLimit: byteLimit, maximumAge: maximumAge, clearOnStart: clearOnStart, purgeInterval: purgeInterval)
        }
    }

    /// Opens (creating if needed) a cache directory.
    /// - Parameters:
    ///   - directory: Where entries are kept; used by this cache alone.
    ///   - byteLimit: The most bytes kept. The default is 64 MiB.
    ///   - maximumAge: How long an entry is kept after it was stored, whatever its
    ///     freshness: older entries are removed when the cache opens and when met. The
    ///     default is `nil`: until evicted for space.
    ///   - clearOnStart: Whether to remove every entry left by an earlier run, for a
    ///     cache that lives as long as the process. The default is `false`.
    ///   - purgeInterval: With a `maximumAge`, how often expired entries are removed
    ///     in the background. The default is 10 minutes.
    public init(
        directory: URL, byteLimit: Int = 64 * 1024 * 1024, maximumAge: Duration? = nil, clearOnStart: Bool = false,
        purgeInterval: Duration = .seconds(600)
    ) throws {
        executor = ThreadExecutor(name: "MomentsNetworking.DiskResponseCache")
        self.directory = directory.standardizedFileURL
        self.byteLimit = max(1, byteLimit)
        self.maximumAge = maximumAge
        self.purgeInterval = purgeInterval
        try AtomicFile.createPrivateDirectory(self.directory)
        identityKey = AtomicFile.secret(named: Self.identityKeyName, in: self.directory)
        AtomicFile.removeStaleTemporaries(in: self.directory, olderThan: 600)
        let keys: [URLResourceKey] = [.fileSizeKey, .contentModificationDateKey]
        let files = (try? FileManager.default.contentsOfDirectory(at: self.directory, includingPropertiesForKeys: keys)) ?? []
        let known = files.compactMap { url -> (CacheKey, Int, Date)? in
            let name = url.lastPathComponent
            guard name.hasSuffix(Self.suffix), let values = try? url.resourceValues(forKeys: Set(keys)) else { return nil }
            return (CacheKey(rawValue: String(name.dropLast(Self.suffix.count))), values.fileSize ?? 0, values.contentModificationDate ?? .distantPast)
        }.sorted { $0.2 < $1.2 }
        let oldest = maximumAge.map { Date().addingTimeInterval(-$0.seconds) }
        for (key, size, modified) in known {
            if clearOnStart || oldest.map({ modified < $0 }) == true {
                try? FileManager.default.removeItem(at: self.directory.appendingPathComponent(key.rawValue + Self.suffix))
                continue
            }
            clock += 1
            entries[key] = Entry(size: size, lastUse: clock, stored: modified)
            totalSize += size
        }
        if maximumAge != nil {
            let interval = purgeInterval
            purging.withLock {
                $0 = Task { [weak self] in
                    while (try? await Task.sleep(for: interval)) != nil {
                        guard let self else { return }
                        await self.purgeExpired()
                    }
                }
            }
        }
    }

    deinit {
        purging.withLock { $0?.cancel() }
        executor.shutDown()
    }

    /// Removes every entry older than `maximumAge`, a few at a time so that lookups
    /// and stores waiting on the cache go between them. Runs by itself every
    /// `purgeInterval`; call it to purge now.
    public func purgeExpired() async {
        guard let maximumAge else { return }
        let oldest = Date().addingTimeInterval(-maximumAge.seconds)
        let expired = entries.filter { $0.value.stored < oldest }.map(\.key)
        for (index, key) in expired.enumerated() {
            if let entry = entries[key], entry.stored < oldest { removeResponse(for: key) }
            if index % 64 == 63 { await Task.yield() }
        }
    }

    private func url(for key: CacheKey) -> URL {
        directory.appendingPathComponent(key.rawValue + Self.suffix)
    }

    /// The entry for `key`, if any is kept and not past its maximum age.
    public func cachedResponse(for key: CacheKey) -> CachedResponse? {
        guard entries[key] != nil else { return nil }
        guard let data = try? Data(contentsOf: url(for: key)),
              let response = try? decoder.decode(CachedResponse.self, from: data) else {
            removeResponse(for: key)
            return nil
        }
        if let maximumAge, response.age() > maximumAge.seconds {
            removeResponse(for: key)
            return nil
        }
        clock += 1
        entries[key]?.lastUse = clock
        return response
    }

    /// Keeps `response` under `key`, evicting others if needed.
    public func store(_ response: CachedResponse, for key: CacheKey) {
        guard let data = try? encoder.encode(response), data.count <= byteLimit else { return }
        do {
            try AtomicFile.write(data, to: url(for: key))
        } catch {
            return
        }
        clock += 1
        if let old = entries[key] { totalSize -= old.size }
        entries[key] = Entry(size: data.count, lastUse: clock, stored: Date())
        totalSize += data.count
        evict(sparing: key)
    }

    private func evict(sparing key: CacheKey) {
        guard totalSize > byteLimit else { return }
        let target = byteLimit - byteLimit / 10
        for (victim, _) in entries.sorted(by: { $0.value.lastUse < $1.value.lastUse }) where victim != key {
            guard totalSize > target else { break }
            removeResponse(for: victim)
        }
    }

    /// Forgets the entry for `key`.
    public func removeResponse(for key: CacheKey) {
        guard let old = entries.removeValue(forKey: key) else { return }
        totalSize -= old.size
        try? FileManager.default.removeItem(at: url(for: key))
    }

    /// Forgets every entry.
    public func clear() throws {
        for key in Array(entries.keys) { removeResponse(for: key) }
    }

    /// The bytes kept.
    public var size: Int { totalSize }

    /// The number of entries.
    public var count: Int { entries.count }
}
