import Foundation
import Moments
import MomentsTestSupport
import Testing

/// The rules of ``MomentsStore/changes()``: numbering, buffering, catch-up, and
/// silence when nothing changed.
@Suite struct MomentsStoreChangeFeedTests {
    // MARK: Order

    /// Many tasks refresh and like at once; every consumer, live or replaying, sees the
    /// same strictly increasing, gap-free sequence, and each moment's last change is the
    /// state the store ends with.
    @Test(arguments: [UInt64(11), 23, 37, 41, 59])
    func everyConsumerSeesOneStrictlyIncreasingHistory(seed: UInt64) async throws {
        let fixture = await StoreFixture { $0.retainedChanges = 100_000; $0.changeBufferSize = 100_000 }
        let users = ["0", "1", "2"]
        await fixture.service.addUser("1", moments: ["b", "c", "d"])
        await fixture.service.addUser("2", moments: ["c", "d", "e"])
        let first = StreamProbe(fixture.store.changes())
        let second = StreamProbe(fixture.store.changes())

        var generator = SeededGenerator(seed: seed)
        let operations: [(user: String, moment: String?, like: Bool)] = (0..<120).map { _ in
            let user = users.randomElement(using: &generator) ?? "0"
            let moments = user == "0" ? ["a", "b", "c"] : user == "1" ? ["b", "c", "d"] : ["c", "d", "e"]
            let isRefresh = Int.random(in: 0..<4, using: &generator) == 0
            return (user, isRefresh ? nil : moments.randomElement(using: &generator), Bool.random(using: &generator))
        }
        for user in users { try await fixture.store.refresh(userID: user) }
        await withTaskGroup(of: Void.self) { group in
            for operation in operations {
                group.addTask {
                    if let moment = operation.moment {
                        _ = try? await fixture.store.setLike(operation.like, momentID: moment, userID: operation.user)
                    } else {
                        _ = try? await fixture.store.refresh(userID: operation.user)
                    }
                }
            }
        }
        await fixture.store.waitUntilIdle()
        let last = fixture.store.lastChangeSequence
        let replay = StreamProbe(fixture.store.changes(after: 0))

        for probe in [first, second, replay] {
            let seen = await probe.waitUntil { $0.sequence >= last }
            #expect(seen?.sequence == last, "seed \(seed)")
        }
        let history = first.values
        #expect(history.map(\.sequence) == Array(1...last), "seed \(seed): sequences are not 1…\(last)")
        #expect(second.values.map(\.description) == history.map(\.description), "seed \(seed)")
        #expect(replay.values.map(\.description) == history.map(\.description), "seed \(seed)")

        // Each user's last change of each moment is the moment as that user sees it.
        var lastChange: [String: MomentChange] = [:]
        for change in history {
            guard case .moment(let update) = change.kind else { continue }
            for user in update.holders { lastChange["\(update.moment.id)/\(user)"] = update }
        }
        for user in users {
            let details = try #require(try await fixture.store.details(for: user))
            for moment in details.moments {
                guard let update = lastChange["\(moment.id)/\(user)"] else { continue }
                #expect(update.moment(for: user) == moment, "seed \(seed): moment \(moment.id) of user \(user)")
            }
            #expect(details == (try await fixture.service.serverTimeline(user)), "seed \(seed)")
        }
    }

    // MARK: What a change says

    /// A like reaches its liker at once (optimistic), the other holders of the moment
    /// only once the server confirmed it, then the liker with the confirmed value.
    @Test func aLikeTravelsToItsLikerFirstAndToTheOtherHoldersOnceConfirmed() async throws {
        let fixture = await StoreFixture()
        await fixture.service.addUser("1", moments: ["b", "z"])
        try await fixture.store.refresh(userID: "0")
        try await fixture.store.refresh(userID: "1")
        let probe = StreamProbe(fixture.store.changes())

        try await fixture.store.setLike(true, momentID: "b", userID: "0")

        let changes = await probe.waitFor(count: 3)
        let updates = changes.compactMap { change -> MomentChange? in
            if case .moment(let update) = change.kind { return update } else { return nil }
        }
        #expect(updates.map(\.phase) == [.optimistic, .confirmed, .confirmed])
        #expect(updates.map(\.holders) == [["0"], ["1"], ["0"]])
        #expect(updates.allSatisfy { $0.moment.id == "b" && $0.likedBy == "0" })
        #expect(updates.first?.moment(for: "0").isLiked == true)
        #expect(updates[1].moment(for: "1").likes?.contains { $0.id == "0" } == true)
        #expect(updates[1].moment(for: "1").isLiked == true) // as user 1's own answer said: "1" liked b from the start
        #expect(updates.last?.moment(for: "0").isLiked == true)
        #expect(changes.map(\.userIDs) == [["0"], ["1"], ["0"]])
    }

    @Test func aFailedLikeIsRolledBackAndAFailedRefreshCarriesItsError() async throws {
        let fixture = await StoreFixture()
        try await fixture.store.refresh(userID: "0")
        let probe = StreamProbe(fixture.store.changes())

        await fixture.service.failNext(message: "like refused")
        await #expect(throws: FakeMomentsService.InjectedFailure.self) {
            try await fixture.store.setLike(true, momentID: "a", userID: "0")
        }
        await fixture.service.failNext(message: "refresh refused")
        await #expect(throws: FakeMomentsService.InjectedFailure.self) {
            try await fixture.store.refresh(userID: "0")
        }

        let changes = await probe.waitFor(count: 4)
        #expect(changes.count == 4)
        guard changes.count == 4 else { return }
        guard case .moment(let optimistic) = changes[0].kind, case .moment(let rolledBack) = changes[1].kind else {
            Issue.record("expected two moment changes, got \(changes)")
            return
        }
        #expect(optimistic.phase == .optimistic && optimistic.moment(for: "0").isLiked == true)
        #expect(rolledBack.phase == .rolledBack && rolledBack.moment(for: "0").isLiked == false)
        guard case .refreshStarted("0") = changes[2].kind, case .refreshFailed("0", let error) = changes[3].kind else {
            Issue.record("expected a refresh start and failure, got \(changes[2...])")
            return
        }
        #expect((error as? FakeMomentsService.InjectedFailure)?.message == "refresh refused")
    }

    @Test func aReplacedTimelineNamesTheMomentsInsertedRemovedAndChanged() async throws {
        let fixture = await StoreFixture()
        try await fixture.store.refresh(userID: "0")
        let probe = StreamProbe(fixture.store.changes())

        await fixture.service.addUser("0", moments: ["a", "c", "d"])
        await fixture.service.addUser("7", moments: ["c"])
        _ = try await fixture.service.updateLike(true, momentID: "c", fromUserID: "7")
        try await fixture.store.refresh(userID: "0")

        let timeline = await probe.waitForAny { if case .timeline = $0.kind { true } else { false } }
        guard case .timeline(let change)? = timeline?.kind else {
            Issue.record("no timeline change in \(probe.values)")
            return
        }
        #expect(change.reason == .replaced)
        #expect(change.momentIDs == ["a", "c", "d"])
        #expect(change.inserted.map(\.id) == ["d"])
        #expect(change.removed == ["b"])
        #expect(change.changed == ["c"])
        let movedMoment = probe.values.contains {
            if case .moment(let update) = $0.kind { update.moment.id == "c" && update.phase == .confirmed } else { false }
        }
        #expect(movedMoment, "the changed moment travels as a moment change too")
    }

    // MARK: Silence

    @Test func anIdenticalRefreshEmitsNoChangeAndNoSnapshot() async throws {
        let fixture = await StoreFixture()
        try await fixture.store.refresh(userID: "0")
        let changes = StreamProbe(fixture.store.changes())
        let snapshots = StreamProbe(await fixture.store.updates(for: "0"))
        await snapshots.waitFor(count: 1)

        for _ in 0..<5 { try await fixture.store.refresh(userID: "0") }
        // A change that does emit, to know everything before it was delivered.
        try await fixture.store.setLike(true, momentID: "a", userID: "0")
        await changes.waitUntil { $0.sequence == fixture.store.lastChangeSequence }
        await snapshots.waitUntil { $0.isLiked("a") == true }

        let kinds = changes.values.map { change -> String in
            switch change.kind {
            case .refreshStarted: "started"
            case .refreshFinished: "finished"
            case .moment(let update): "moment \(update.phase)"
            default: "\(change)"
            }
        }
        // Nothing changed, but an observer still learns each refresh ended.
        #expect(kinds == Array(repeating: ["started", "finished"], count: 5).flatMap { $0 } + ["moment optimistic", "moment confirmed"])
        // The confirmation equals the optimistic value: no second snapshot.
        #expect(snapshots.values.count == 2, "\(snapshots.values.count) snapshots")
    }

    // MARK: Buffering and catch-up

    @Test func aConsumerFallingBehindGetsAGapMarkerThenTheNewestChanges() async throws {
        let fixture = await StoreFixture { $0.changeBufferSize = 4 }
        try await fixture.store.refresh(userID: "0")
        let stream = fixture.store.changes()
        let before = fixture.store.lastChangeSequence

        for round in 0..<5 { try await fixture.store.setLike(round % 2 == 0, momentID: "a", userID: "0") }
        let last = fixture.store.lastChangeSequence
        #expect(last - before == 10)

        var iterator = stream.makeAsyncIterator()
        let gap = await iterator.next()
        guard case .gap(let missed)? = gap?.kind else {
            Issue.record("expected a gap marker first, got \(String(describing: gap))")
            return
        }
        #expect(missed == (before + 1)...(last - 4))
        var rest: [UInt64] = []
        for _ in 0..<4 { if let change = await iterator.next() { rest.append(change.sequence) } }
        #expect(rest == Array((last - 3)...last))

        // Resynchronising from a snapshot gives the server's state.
        #expect(try await fixture.store.details(for: "0") == (try await fixture.service.serverTimeline("0")))
        try await fixture.store.setLike(false, momentID: "b", userID: "0")
        #expect(await iterator.next()?.sequence == last + 1)
    }

    @Test func replayJoinsTheLiveFeedWithoutGapOrDuplicate() async throws {
        let fixture = await StoreFixture()
        try await fixture.store.refresh(userID: "0")
        let likes = Task {
            for round in 0..<300 { _ = try? await fixture.store.setLike(round % 2 == 0, momentID: "c", userID: "0") }
        }
        // Join at several points while changes are being published.
        var probes: [(after: UInt64, probe: StreamProbe<MomentsChange>)] = []
        for _ in 0..<20 {
            let after = fixture.store.lastChangeSequence
            probes.append((after, StreamProbe(fixture.store.changes(after: after))))
            await Task.yield()
        }
        await likes.value
        await fixture.store.waitUntilIdle()
        let last = fixture.store.lastChangeSequence

        for (after, probe) in probes {
            guard after < last else {
                #expect(probe.values.isEmpty)
                continue
            }
            await probe.waitUntil { $0.sequence >= last }
            #expect(probe.values.map(\.sequence) == Array((after + 1)...last), "joined after \(after)")
        }
    }

    @Test func resumingBeforeTheRetainedLogStartsWithAGapMarker() async throws {
        let fixture = await StoreFixture { $0.retainedChanges = 2 }
        try await fixture.store.refresh(userID: "0")
        for round in 0..<2 { try await fixture.store.setLike(round == 0, momentID: "a", userID: "0") }
        let last = fixture.store.lastChangeSequence

        let probe = StreamProbe(fixture.store.changes(after: 1))
        let values = await probe.waitUntil { $0.sequence >= last }.map { _ in probe.values } ?? []

        guard case .gap(let missed)? = values.first?.kind else {
            Issue.record("expected a gap marker first, got \(values)")
            return
        }
        #expect(missed == 2...(last - 2))
        #expect(values.dropFirst().map(\.sequence) == [last - 1, last])
    }

    @Test func resumingAtTheLatestSequenceReplaysNothing() async throws {
        let fixture = await StoreFixture()
        try await fixture.store.refresh(userID: "0")
        let last = fixture.store.lastChangeSequence
        let probe = StreamProbe(fixture.store.changes(after: last))

        try await fixture.store.setLike(true, momentID: "a", userID: "0")

        let values = await probe.waitFor(count: 2)
        #expect(values.map(\.sequence) == [last + 1, last + 2])
    }

    // MARK: Resources

    @Test func everyConsumersResourcesAreReleasedOnCancellation() async throws {
        let fixture = await StoreFixture()
        try await fixture.store.refresh(userID: "0")

        for cycle in 0..<10_000 {
            let stream = fixture.store.changes()
            switch cycle % 3 {
            case 0:
                let consumer = Task { for await _ in stream {} }
                consumer.cancel()
                await consumer.value
            case 1:
                // Cancelled while waiting for a change.
                let consumer = Task { for await _ in stream {} }
                await Task.yield()
                consumer.cancel()
                await consumer.value
            default:
                break // dropped without being iterated
            }
        }

        let released = await eventually { fixture.store.changeConsumerCount == 0 }
        #expect(released, "\(fixture.store.changeConsumerCount) consumers leaked")
        // The feed still works for a new consumer.
        let probe = StreamProbe(fixture.store.changes())
        try await fixture.store.setLike(true, momentID: "a", userID: "0")
        #expect(await probe.waitFor(count: 2).count == 2)
    }
}
