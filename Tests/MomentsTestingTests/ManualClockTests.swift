import Foundation
import MomentsNetworking
import MomentsSupport
import MomentsTesting
import MomentsTestSupport
import Testing
import MomentsHTTP

/// `ManualClock`: wake-ups run in the order of their deadlines when the clock is moved,
/// never before; the `MomentsTesting` article's example, as written there.
@Suite struct ManualClockTests {
    @Test func wakeUpsRunInDeadlineOrderWhenTheClockReachesThem() {
        let clock = ManualClock()
        let ran = PThreadMutex<[Int]>([])
        let start = clock.now
        for (index, offset) in [300, 100, 200, 100].enumerated() {
            _ = clock.wake(at: start + .milliseconds(offset)) { ran.withLock { $0.append(index) } }
        }
        let cancelled = clock.wake(at: start + .milliseconds(150)) { ran.withLock { $0.append(99) } }
        cancelled.cancel()
        clock.advance(by: .milliseconds(99))
        #expect(ran.withLock { $0 }.isEmpty)
        clock.advance(by: .milliseconds(101))
        #expect(ran.withLock { $0 } == [1, 3, 2])
        #expect(clock.pendingWakeUps == 1)
        clock.advance(by: .seconds(1))
        #expect(ran.withLock { $0 } == [1, 3, 2, 0])
        #expect(clock.elapsed == .milliseconds(1_200))
        #expect(clock.date == Date(timeIntervalSince1970: 1_700_000_001.2))
    }

    /// A sleep ends when the clock reaches its deadline, or at once with
    /// `CancellationError` when its task is cancelled, leaving no wake-up behind.
    @Test func aSleepEndsAtItsDeadlineOrWhenCancelled() async throws {
        let clock = ManualClock()
        let sleeper = Task { try await clock.sleep(for: .seconds(10)) }
        await clock.waitForWakeUps(1)
        clock.advance(by: .seconds(10))
        try await sleeper.value

        let cancelled = Task { try await clock.sleep(for: .seconds(10)) }
        await clock.waitForWakeUps(1)
        cancelled.cancel()
        #expect(await cancelled.result.error is CancellationError)
        #expect(clock.pendingWakeUps == 0)

        let alreadyCancelled = Task {
            withUnsafeCurrentTask { $0?.cancel() }
            try await clock.sleep(for: .seconds(10))
        }
        #expect(await alreadyCancelled.result.error is CancellationError)
        #expect(clock.pendingWakeUps == 0)
    }

    /// The example of the `MomentsTesting` article.
    @Test func theArticlesExample() async throws {
        let url = URL(string: "https://bff.example.com")!
        let calls = PThreadMutex(0)
        let transport = StubTransport { _ in
            let call = calls.withLock { count -> Int in
                count += 1
                return count
            }
            return HTTPResponse(statusCode: call == 1 ? 503 : 200, body: Data(#""ok""#.utf8))
        }
        let request = Endpoint<String>(.get, "/status")

        let clock = ManualClock()
        let client = HTTPClient.patient(baseURL: url, transport: transport) {
            $0.clock = clock
            $0.retryPolicy = RetryPolicy(initialDelay: .milliseconds(200), jitter: 0)
        }
        async let answer = client.send(request)   // the first attempt is answered 503
        await clock.waitForWakeUps(1)             // the retry's backoff has begun
        clock.advance(by: .milliseconds(200))     // … and is over: the retry goes
        let value = try await answer

        #expect(value == "ok")
        #expect(calls.withLock { $0 } == 2)
    }
}
