import Foundation
import MomentsTestSupport
import Testing

/// `moments` processes sharing one PostgreSQL store, or one SQLite file, stand in for
/// instances of a service.
@Suite struct SharedStoreExecutableTests {
    /// Two `watch --all` processes on one store, refreshing only once an hour, show a
    /// like made through a third process: it reaches them through the change feed (the
    /// database's notifications, or the SQLite file's change log), not through their
    /// refreshes.
    @Test(arguments: ["postgres", "sqlite"])
    func twoWatchersSeeALikeMadeThroughAThirdProcess(kind: String) async throws {
        let bff = try await ReferenceBFF()
        defer { bff.stop() }
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let store = kind == "postgres"
            ? "postgres:" + (try await PostgresServer.shared().createDatabase())
            : "sqlite:" + directory.url.appendingPathComponent("shared.sqlite").path
        let connection = ["--base-url", bff.baseURL.absoluteString, "--store", store]
        let fetched = try await MomentsExecutable.run(["timeline", "--user", "1", "--json"] + connection, in: directory.url)
        #expect(fetched.status == 0, "\(fetched.err)")
        let timeline = try JSONSerialization.jsonObject(with: Data(fetched.out.utf8)) as? [String: Any]
        let moment = (timeline?["moments"] as? [[String: Any]])?.first { $0["id"] as? String == "2" }
        #expect(moment?["isLiked"] as? Bool == false, "user 1's timeline holds moment 2, not liked yet")

        var watchers: [(process: Process, lines: AsyncStream<String>.AsyncIterator)] = []
        defer { for watcher in watchers where watcher.process.isRunning { watcher.process.terminate() } }
        for _ in 0..<2 {
            let (process, lines) = try MomentsExecutable.start(["watch", "--all", "--json", "--interval", "3600"] + connection, in: directory.url)
            var iterator = lines.makeAsyncIterator()
            // Ready once its first refresh of user 1 has started (the store is listening).
            while let line = await iterator.next(), !line.contains(#""type":"refreshStarted""#) {}
            watchers.append((process, iterator))
        }

        let like = try await MomentsExecutable.run(["like", "--user", "1", "--moment", "2"] + connection, in: directory.url)
        #expect(like.status == 0, "\(like.err)")
        // A hang detector, not a wait: watchers that never print the like are stopped,
        // which ends their output and fails the test instead of hanging it.
        let processes = watchers.map(\.process)
        let watchdog = Task {
            guard (try? await Task.sleep(for: .seconds(60))) != nil else { return }
            for process in processes where process.isRunning { process.terminate() }
        }
        defer { watchdog.cancel() }

        for index in watchers.indices {
            var seen: [String: Any]?
            while let line = await watchers[index].lines.next() {
                guard let object = try? JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any],
                      object["type"] as? String == "moment",
                      let moment = object["moment"] as? [String: Any], moment["id"] as? String == "2",
                      let likes = moment["likes"] as? [[String: Any]], likes.contains(where: { $0["id"] as? String == "1" })
                else { continue }
                seen = object
                break
            }
            #expect(seen?["phase"] as? String == "confirmed", "watcher \(index) never printed the like")
            #expect(seen?["users"] as? [String] == ["1"])
            watchers[index].process.interrupt()
            #expect(await watchers[index].process.exitStatus() == 0)
        }
    }
}
