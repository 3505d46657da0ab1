import Foundation
@testable import Moments
import MomentsNetworking
import MomentsSupport
import MomentsTestSupport
import Testing

/// Refreshing many timelines spread over a window (full jitter) instead of in one burst.
@Suite struct MomentsStoreSpreadRefreshTests {
    /// The start offsets are uniform over the window: every user once, none outside it,
    /// and no tenth of the window gets much more than its share.
    @Test(arguments: [UInt64(1), 2, 3])
    func startsAreSpreadUniformlyOverTheWindow(seed: UInt64) {
        var generator = SeededGenerator(seed: seed)
        let users = (0..<10_000).map { "user-\($0)" }
        let plan = MomentsStore.spreadStarts(of: users, over: .seconds(10), using: &generator)
        #expect(Set(plan.map(\.userID)) == Set(users) && plan.count == users.count)
        #expect(plan.allSatisfy { $0.offset >= .zero && $0.offset < .seconds(10) })
        #expect(zip(plan, plan.dropFirst()).allSatisfy { $0.offset <= $1.offset }, "earliest first")
        var buckets = [Int](repeating: 0, count: 10)
        for start in plan { buckets[Int(start.offset.seconds)] += 1 }
        #expect(buckets.allSatisfy { (850...1_150).contains($0) }, "seed \(seed): \(buckets)")
    }

    /// Through a store: every user is refreshed, none before its start, at most the
    /// given number at a time, and one failure is reported without stopping the others.
    @Test func everyUserIsRefreshedNoneEarlyAndAFailureIsReported() async throws {
        let service = TimedService()
        let users = (0..<24).map { "user-\($0)" }
        for user in users { await service.fake.addUser(user, moments: ["m-\(user)"]) }
        await service.fake.failNext(1)
        let store = MomentsStore(service: service, persistence: InMemoryPersistence())
        let window = Duration.milliseconds(240)
        var generator = SeededGenerator(seed: 7)
        var planGenerator = SeededGenerator(seed: 7)
        let plan = MomentsStore.spreadStarts(of: users, over: window, using: &planGenerator)

        let started = ContinuousClock.now
        let failures = await store.refresh(userIDs: users, spreadOver: window, maximumConcurrent: 3, source: .server, using: &generator)

        #expect(failures.count == 1, "\(failures)")
        for user in users where failures[user] == nil {
            #expect(try await store.details(for: user)?.moments.map(\.id) == ["m-\(user)"])
        }
        let calls = service.calls
        #expect(calls.count == users.count)
        for start in plan {
            let call = try #require(calls[start.userID])
            #expect(call >= started + start.offset, "\(start.userID) was refreshed before its start")
        }
        #expect(service.maximumInFlight <= 3)
        #expect(plan.last!.offset - plan.first!.offset > window / 2, "the seeded plan spans the window")
    }
}

/// A service recording when each user's timeline was asked for, and how many calls ran
/// at once.
private final class TimedService: MomentsService {
    let fake = FakeMomentsService()
    private struct State {
        var calls: [String: ContinuousClock.Instant] = [:]
        var inFlight = 0
        var maximumInFlight = 0
    }
    private let state = PThreadMutex(State())
    var calls: [String: ContinuousClock.Instant] { state.withLock { $0.calls } }
    var maximumInFlight: Int { state.withLock { $0.maximumInFlight } }
    var cachesTimelines: Bool { false }

    func getMoments(userID: String) async throws -> MomentsDetails {
        state.withLock {
            $0.calls[userID] = .now
            $0.inFlight += 1
            $0.maximumInFlight = max($0.maximumInFlight, $0.inFlight)
        }
        defer { state.withLock { $0.inFlight -= 1 } }
        await Task.yield()
        return try await fake.getMoments(userID: userID)
    }

    func updateLike(_ isLiked: Bool, momentID: String, fromUserID userID: String) async throws -> MomentsDetails {
        try await fake.updateLike(isLiked, momentID: momentID, fromUserID: userID)
    }
}
