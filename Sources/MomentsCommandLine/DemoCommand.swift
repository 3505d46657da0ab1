import Foundation
import Moments
import MomentsNetworking
import MomentsSQLite
import Synchronization
import MomentsHTTP
import MomentsBFF

/// `moments demo`: the whole story against the reference BFF on loopback.
struct DemoCommand {
    let console: Console
    let user = "0"

    func run(_ arguments: ParsedArguments) async throws {
        let (path, temporaryDirectory) = try storePath(arguments)
        let transport = try TransportChoice.make(arguments, environment: ProcessInfo.processInfo.environment)
        // Clean-up is registered before anything exists to clean up, so an interrupt at
        // any point leaves nothing behind (the BFF also exits when this process does).
        let running = RunningBFF()
        let cleanUp: @Sendable () -> Void = {
            running.stop()
            if let temporaryDirectory { try? FileManager.default.removeItem(at: temporaryDirectory) }
        }
        let interrupt = Interrupts.onInterrupt(cleanUp)
        defer {
            cleanUp()
            Interrupts.remove(interrupt)
        }
        if let temporaryDirectory {
            try FileManager.default.createDirectory(at: temporaryDirectory, withIntermediateDirectories: true)
        }
        let bff = try await ReferenceBFFProcess.start()
        running.set(bff)
        console.line("▶ Started the reference BFF at \(bff.baseURL)/graphql")

        let client = HTTPClient(baseURL: bff.baseURL, transport: transport) {
            $0.timeout = .seconds(5)
            $0.retryPolicy = RetryPolicy(maximumAttempts: 2, initialDelay: .milliseconds(100))
        }
        let service = GraphQLMomentsService(client: client)
        let store = MomentsStore(service: service, persistence: try await SQLitePersistence.open(path: path))
        // However the story ends (an interrupt cancels it), the store finishes its writes
        // and closes the file, and the client ends its connections.
        do {
            try await tell(bff: bff, store: store, service: service, path: path)
        } catch {
            await store.shutdown(gracePeriod: .milliseconds(500))
            await client.shutdown(gracePeriod: .milliseconds(250))
            throw error
        }
        await client.shutdown(gracePeriod: .milliseconds(250))
    }

    /// The story: fetch, subscribe, like and unlike, stop the BFF, serve offline.
    private func tell(bff: ReferenceBFFProcess, store: MomentsStore, service: GraphQLMomentsService, path: String) async throws {
        console.line("▶ Fetching user \(user)'s timeline into the SQLite store \(path)")
        let fetched = try await store.refresh(userID: user)
        TimelineFormatter.text(fetched).forEach(console.line)

        console.line("▶ Subscribing to the store's changes and to user \(user)'s timeline")
        let updates = UpdateLog()
        let changes = store.changes()
        let user = self.user
        let consumer = Task {
            for await change in changes {
                if case .moment(let update) = change.kind { updates.append(update.moment(for: user), phase: update.phase) }
            }
        }
        defer { consumer.cancel() }
        let snapshots = await store.updates(for: user)
        let snapshotCount = SnapshotCount()
        let snapshotConsumer = Task { for await _ in snapshots { snapshotCount.increment() } }
        defer { snapshotConsumer.cancel() }

        guard let target = fetched.moments.first(where: { $0.isLiked == false }) ?? fetched.moments.first else {
            throw CommandFailure("user \(user)'s timeline has no moments to like")
        }
        try await likeAndUnlike(target, in: store, watching: updates)
        let finalState = try await store.details(for: user)

        await store.shutdown()
        console.line("▶ Stopping the BFF")
        bff.stop()

        try await serveOffline(from: path, service: service, expecting: finalState)
        console.line("✔ Demo complete: fetched \(fetched.moments.count) moments, liked and unliked moment [\(target.id)] with \(updates.count) moment changes and \(snapshotCount.value) timeline snapshots, and served the timeline offline from SQLite.")
    }

    /// Likes, then unlikes, `target`, printing the stream's updates of it; each must be
    /// confirmed by the BFF.
    private func likeAndUnlike(_ target: Moment, in store: MomentsStore, watching updates: UpdateLog) async throws {
        for isLiked in [true, false] {
            console.line("▶ \(isLiked ? "Liking" : "Unliking") moment [\(target.id)] (optimistic, then confirmed by the BFF)")
            let seen = updates.count
            let confirmed = try await store.setLike(isLiked, momentID: target.id, userID: user)
            let delivered = await updates.wait(forCount: seen + 2, timeout: .seconds(2))
            for (moment, phase) in delivered.dropFirst(seen) where moment.id == target.id {
                console.line("  stream update (\(phase)): \(TimelineFormatter.heart(moment)) [\(moment.id)] \(TimelineFormatter.likes(moment))")
            }
            guard confirmed.moment(withID: target.id)?.isLiked == isLiked else {
                throw CommandFailure("the BFF did not confirm the \(isLiked ? "like" : "unlike")")
            }
        }
    }

    /// Opens a fresh store on `path` with the BFF down: it must serve `finalState` and
    /// fail a refresh.
    private func serveOffline(from path: String, service: GraphQLMomentsService, expecting finalState: MomentsDetails?) async throws {
        console.line("▶ Opening a fresh store on \(path) with the BFF down")
        let offlineStore = MomentsStore(service: service, persistence: try await SQLitePersistence.open(path: path))
        do {
            try await serveOffline(from: offlineStore, path: path, expecting: finalState)
        } catch {
            await offlineStore.shutdown(gracePeriod: .milliseconds(500))
            throw error
        }
        await offlineStore.shutdown()
    }

    private func serveOffline(from offlineStore: MomentsStore, path: String, expecting finalState: MomentsDetails?) async throws {
        guard let offline = try await offlineStore.details(for: user) else {
            throw CommandFailure("the stored timeline is missing after the restart")
        }
        TimelineFormatter.text(offline).forEach(console.line)
        do {
            try await offlineStore.refresh(userID: user)
            throw CommandFailure("the BFF answered although it was stopped")
        } catch let error as HTTPClientError {
            console.line("  a refresh now fails as it should: \(MomentsCommandLine.describe(error))")
        }
        guard offline == finalState else {
            throw CommandFailure("the timeline served offline differs from the last confirmed one")
        }
    }

    private func storePath(_ arguments: ParsedArguments) throws -> (String, URL?) {
        if let text = arguments.option("store") {
            guard case .sqlite(let path) = try StoreLocation.parse(text) else {
                throw UsageError(message: "the demo needs a SQLite store: --store sqlite:PATH")
            }
            return (path, nil)
        }
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("moments-demo-\(UUID().uuidString)")
        return (directory.appendingPathComponent("moments.sqlite").path, directory)
    }
}

/// The moment changes the store's feed delivered, for the demo to wait on.
final class UpdateLog: Sendable {
    private let values = Mutex<[(Moment, MomentChange.Phase)]>([])

    func append(_ moment: Moment, phase: MomentChange.Phase) { values.withLock { $0.append((moment, phase)) } }

    var count: Int { values.withLock { $0.count } }

    /// Waits until `count` changes arrived or `timeout` passes; returns them all.
    func wait(forCount count: Int, timeout: Duration = .seconds(5)) async -> [(Moment, MomentChange.Phase)] {
        let deadline = ContinuousClock.now + timeout
        while self.count < count, ContinuousClock.now < deadline {
            do { try await Task.sleep(for: .milliseconds(5)) } catch { break }
        }
        return values.withLock { $0 }
    }
}

/// How many timeline snapshots the demo's subscriber received.
final class SnapshotCount: Sendable {
    private let count = Mutex(0)

    func increment() { count.withLock { $0 += 1 } }

    var value: Int { count.withLock { $0 } }
}

/// The demo's BFF once started, for the clean-up that may run on another thread.
final class RunningBFF: Sendable {
    private let bff = Mutex<ReferenceBFFProcess?>(nil)

    func set(_ process: ReferenceBFFProcess) { bff.withLock { $0 = process } }

    func stop() { bff.withLock { $0 }?.stop() }
}
