import Foundation
import Moments
import MomentsNetworking
import MomentsSQLite
import MomentsTestSupport
import MomentsHTTP
import MomentsSupport
import Testing
import MomentsBFF

/// Two stores (as two processes would) on one SQLite file, liking different moments of
/// the same users at once against the reference BFF: each like's answer carries the
/// other store's moment as the server computed it, sometimes before the other store's
/// latest like of it and received after that like was saved. The file must lose no
/// confirmed like: once every call has returned, each moment's likes in the file are
/// the server's.
@Suite struct SQLiteTwoStoresTests {
    @Test(arguments: [false, true])
    func twoStoresLikingDifferentMomentsOfTheSameUsersLoseNoLike(globalIsLiked: Bool) async throws {
        let bff = try await ReferenceBFF(globalIsLiked: globalIsLiked)
        defer { bff.stop() }
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let path = directory.url.appendingPathComponent("shared.sqlite").path
        let users = ["0", "1", "2", "3"]
        var stores: [MomentsStore] = []
        for _ in 0..<2 {
            let transport = LateAnswers(wrapping: URLSessionTransport(), seed: UInt64(stores.count))
            let client = HTTPClient.patient(baseURL: bff.baseURL, transport: transport) { $0.timeout = .seconds(120) }
            let persistence = try await SQLitePersistence.open(path: path)
            stores.append(MomentsStore(service: GraphQLMomentsService(client: client), persistence: persistence))
        }
        for store in stores {
            for user in users { try await store.refresh(userID: user) }
        }
        let seed = UInt64.random(in: 0...UInt64.max)
        // Store 0 likes and unlikes moment "0", store 1 moment "2"; every timeline holds both.
        let plans: [[(user: String, isLiked: Bool)]] = (0..<2).map { index in
            var generator = SeededGenerator(seed: seed &+ UInt64(index))
            return (0..<250).map { _ in (users.randomElement(using: &generator) ?? "0", Bool.random(using: &generator)) }
        }
        await withTaskGroup(of: Void.self) { group in
            for (index, store) in stores.enumerated() {
                let moment = index == 0 ? "0" : "2"
                // Eight calls in flight per store, so answers overlap each other's.
                for lane in 0..<8 {
                    group.addTask {
                        for call in plans[index].enumerated() where call.offset % 8 == lane {
                            _ = try? await store.setLike(call.element.isLiked, momentID: moment, userID: call.element.user)
                        }
                    }
                }
            }
        }
        for store in stores { await store.waitUntilIdle() }

        let server = GraphQLMomentsService(baseURL: bff.baseURL)
        let truth = try await server.getMoments(userID: "1")
        let reader = try await SQLitePersistence.open(path: path)
        for user in users {
            let stored = try #require(try await reader.load(userID: user))
            for id in ["0", "2"] {
                let likes = stored.moment(withID: id)?.likes.map { Set($0.map(\.id)) }
                let expected = truth.moment(withID: id)?.likes.map { Set($0.map(\.id)) }
                #expect(likes == expected, "seed \(seed), \(globalIsLiked ? "global" : "per-viewer") isLiked: moment \(id) in \(user)'s stored timeline is liked by \(likes ?? []), the server says \(expected ?? [])")
            }
        }
    }

    /// Store 1 likes moment "2" (user "3"); store 0's like of moment "0" is answered (the
    /// server computes its timeline: moment "2" liked by user "3", not by user "2") and
    /// held inside the process while store 1's like of moment "2" by user "2" is answered
    /// and saved; then store 0 saves its answer, whose moment "2" differs from what store
    /// 0 held. The file must keep the like store 1 confirmed last.
    @Test func anAnswerHeldInsideTheProcessDoesNotUndoTheOtherStoresSavedLike() async throws {
        let bff = try await ReferenceBFF()
        defer { bff.stop() }
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let path = directory.url.appendingPathComponent("shared.sqlite").path
        let held = HeldAnswers(wrapping: URLSessionTransport())
        var stores: [MomentsStore] = []
        for transport in [held as any HTTPTransport, URLSessionTransport()] {
            let client = HTTPClient.patient(baseURL: bff.baseURL, transport: transport) { $0.timeout = .seconds(120) }
            let persistence = try await SQLitePersistence.open(path: path)
            stores.append(MomentsStore(service: GraphQLMomentsService(client: client), persistence: persistence))
        }
        for store in stores {
            for user in ["1", "2"] { try await store.refresh(userID: user) }
        }
        // Store 1's first like: store 0's memory of moment "2" is now older than the file.
        _ = try await stores[1].setLike(true, momentID: "2", userID: "3")
        held.holdNext()
        let heldStore = stores[0]
        let first = Task { try await heldStore.setLike(true, momentID: "0", userID: "1") }
        await held.waitUntilHolding()
        _ = try await stores[1].setLike(true, momentID: "2", userID: "2")
        held.release()
        _ = try await first.value
        await stores[0].waitUntilIdle()

        let reader = try await SQLitePersistence.open(path: path)
        for user in ["1", "2"] {
            let stored = try #require(try await reader.load(userID: user))
            #expect(stored.moment(withID: "2")?.likes.map { Set($0.map(\.id)) }?.isSuperset(of: ["2", "3"]) == true,
                    "user \(user)'s stored timeline lost a like of moment 2: \(stored.moment(withID: "2")?.likes?.map(\.id) ?? [])")
            #expect(stored.moment(withID: "0")?.likes?.contains { $0.id == "1" } == true, "user \(user)'s stored timeline lost user 1's like of moment 0")
        }
    }
}

/// Holds the answer of the next request, once it has arrived, until ``release()``.
private final class HeldAnswers: HTTPTransport {
    private struct State {
        var holding = false
        var arrived: CheckedContinuation<Void, Never>?
        var waiter: CheckedContinuation<Void, Never>?
        var released: CheckedContinuation<Void, Never>?
        var isReleased = false
    }

    private let wrapped: any HTTPTransport
    private let state = PThreadMutex(State())

    init(wrapping transport: any HTTPTransport) { wrapped = transport }

    func holdNext() { state.withLock { $0.holding = true } }

    /// Returns once a held answer has arrived.
    func waitUntilHolding() async {
        await withCheckedContinuation { continuation in
            let resumeNow = state.withLock { state -> Bool in
                if state.arrived != nil || state.released != nil { return true }
                state.waiter = continuation
                return false
            }
            if resumeNow { continuation.resume() }
        }
    }

    func release() {
        let released = state.withLock { state -> CheckedContinuation<Void, Never>? in
            state.isReleased = true
            defer { state.released = nil }
            return state.released
        }
        released?.resume()
    }

    func send(_ request: HTTPRequest) async throws -> HTTPResponse {
        let response = try await wrapped.send(request)
        let holds = state.withLock { state -> Bool in
            defer { state.holding = false }
            return state.holding
        }
        guard holds else { return response }
        await withCheckedContinuation { continuation in
            let (waiter, resumeNow) = state.withLock { state -> (CheckedContinuation<Void, Never>?, Bool) in
                if state.isReleased { return (state.waiter, true) }
                state.released = continuation
                defer { state.waiter = nil }
                return (state.waiter, false)
            }
            waiter?.resume()
            if resumeNow { continuation.resume() }
        }
        return response
    }
}

/// Holds each answer inside the process for a seeded number of turns of Swift's
/// scheduler after it arrives, as a busy process would: the server computed it before
/// the store applies and saves it, other answers overtaking it meanwhile.
private final class LateAnswers: HTTPTransport {
    private let wrapped: any HTTPTransport
    private let generator: PThreadMutex<SeededGenerator>

    init(wrapping transport: any HTTPTransport, seed: UInt64) {
        wrapped = transport
        generator = PThreadMutex(SeededGenerator(seed: seed))
    }

    func send(_ request: HTTPRequest) async throws -> HTTPResponse {
        let response = try await wrapped.send(request)
        let turns = generator.withLock { Int.random(in: 0...20, using: &$0) }
        for _ in 0..<turns { await Task.yield() }
        return response
    }
}
