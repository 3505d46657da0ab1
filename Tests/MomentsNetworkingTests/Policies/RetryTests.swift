import Foundation
import MomentsNetworking
import Testing
import MomentsTesting
import MomentsSupport

@Suite struct RetryTests {
    /// The clock the clients read: it stands still (the policy's sleeps are recorded, not
    /// waited), so no deadline passes however busy the machine is.
    private let clock = ManualClock()

    private func client(_ transport: any HTTPTransport, sleeps: SleepRecorder, attempts: Int = 3, metrics: (@Sendable (RequestMetrics) -> Void)? = nil) -> HTTPClient {
        testClient(transport) { [clock] in
            $0.clock = clock
            $0.retryPolicy = RetryPolicy(maximumAttempts: attempts, initialDelay: .milliseconds(100), jitter: 0, sleep: sleeps.sleep)
            $0.metricsHandler = metrics
        }
    }

    @Test func retryableStatusesAreRetriedWithExponentialBackoff() async throws {
        let sleeps = SleepRecorder()
        let transport = ScriptedTransport { call, _ in call < 3 ? status(503) : ok() }

        let user = try await client(transport, sleeps: sleeps).send(Endpoint<User>(.get, "/u"))

        #expect(user.name == "Ada")
        #expect(transport.calls == 3)
        #expect(sleeps.all == [.milliseconds(100), .milliseconds(200)])
    }

    @Test(arguments: [408, 429, 500, 502, 503, 504])
    func eachRetryableStatusIsRetried(code: Int) async throws {
        let transport = ScriptedTransport { call, _ in call == 1 ? status(code) : ok() }
        _ = try await client(transport, sleeps: SleepRecorder()).send(Endpoint<User>(.get, "/u"))
        #expect(transport.calls == 2)
    }

    @Test func otherStatusesAreNotRetried() async throws {
        let transport = ScriptedTransport { _, _ in status(404) }
        await #expect(throws: HTTPClientError.self) { try await client(transport, sleeps: SleepRecorder()).send(Endpoint<User>(.get, "/u")) }
        #expect(transport.calls == 1)
    }

    @Test func retryAfterInSecondsAndAsAnHTTPDateIsHonoured() async throws {
        let sleeps = SleepRecorder()
        let formatter = DateFormatter()
        formatter.locale = Locale(identifier: "en_US_POSIX")
        formatter.timeZone = TimeZone(identifier: "GMT")
        formatter.dateFormat = "EEE, dd MMM yyyy HH:mm:ss 'GMT'"
        let clock = clock
        let transport = ScriptedTransport { call, _ in
            switch call {
            case 1: status(503, headers: ["Retry-After": "2"])
            case 2: status(429, headers: ["Retry-After": formatter.string(from: clock.date.addingTimeInterval(10))])
            default: ok()
            }
        }

        _ = try await client(transport, sleeps: sleeps, attempts: 4).send(Endpoint<User>(.get, "/u"))

        // The date is read against the client's clock, which stood still.
        #expect(sleeps.all == [.seconds(2), .seconds(10)])
    }

    @Test func transportFailuresAreRetried() async throws {
        let transport = ScriptedTransport { call, _ in
            if call == 1 { throw HTTPClientError.transportFailure(TransportFailure(kind: .connectionReset, message: "reset")) }
            return ok()
        }
        let metrics = MetricsSink()

        _ = try await client(transport, sleeps: SleepRecorder(), metrics: metrics.handler).send(Endpoint<User>(.get, "/u"))

        #expect(transport.calls == 2)
        #expect(metrics.all.first?.attempts == 2)
    }

    @Test func nonIdempotentRequestsAreNotRetriedUnlessTheyOptIn() async throws {
        let transport = ScriptedTransport { call, _ in call <= 2 ? status(503) : ok() }
        let client = client(transport, sleeps: SleepRecorder())

        await #expect(throws: HTTPClientError.self) { try await client.send(Endpoint<User>(.post, "/u")) }
        #expect(transport.calls == 1)
        _ = try await client.send(Endpoint<User>(.post, "/u").options { $0.allowsRetry = true })
        #expect(transport.calls == 3)
    }

    @Test func attemptsAndTotalDelayAreBounded() async throws {
        let sleeps = SleepRecorder()
        let always503 = ScriptedTransport { _, _ in status(503) }
        let error = await #expect(throws: HTTPClientError.self) {
            try await client(always503, sleeps: sleeps, attempts: 4).send(Endpoint<User>(.get, "/u"))
        }
        #expect(error?.statusCode == 503)
        #expect(always503.calls == 4)

        let tooLate = ScriptedTransport { _, _ in status(503, headers: ["Retry-After": "3600"]) }
        _ = await #expect(throws: HTTPClientError.self) { try await client(tooLate, sleeps: sleeps).send(Endpoint<User>(.get, "/u")) }
        #expect(tooLate.calls == 1, "a Retry-After beyond the maximum delay is not waited for")
    }

    /// The retry's backoff runs on a clock that never moves by itself: only the
    /// cancellation can end the call, and the retry is never sent.
    @Test func cancellationStopsAPendingRetryAtOnce() async throws {
        let clock = ManualClock()
        let transport = ScriptedTransport { _, _ in status(503) }
        let client = testClient(transport) {
            $0.retryPolicy = RetryPolicy(maximumAttempts: 5, initialDelay: .seconds(120), maximumDelay: .seconds(300), maximumTotalDelay: .seconds(600), jitter: 0)
            $0.timeout = .seconds(900)  // the retry is due within the call's deadline
            $0.clock = clock
        }
        let task = Task { try await client.send(Endpoint<User>(.get, "/u")) }
        await transport.waitForCalls(1)
        await clock.waitForWakeUps(1)  // the backoff has begun

        task.cancel()
        let result = await task.result

        #expect((result.error as? HTTPClientError)?.code == .cancelled)
        #expect(transport.calls == 1)
        #expect(clock.pendingWakeUps == 0, "the backoff's wake-up was withdrawn")
    }
}

final class MetricsSink: Sendable {
    private let values = PThreadMutex<[RequestMetrics]>([])
    var all: [RequestMetrics] { values.withLock { $0 } }
    var handler: @Sendable (RequestMetrics) -> Void { { metrics in self.values.withLock { $0.append(metrics) } } }
}

import MomentsTestSupport
import MomentsHTTP
