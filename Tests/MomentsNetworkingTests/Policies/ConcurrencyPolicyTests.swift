import Foundation
import MomentsNetworking
import MomentsSupport
import MomentsTestSupport
import Testing
import MomentsObservability
import MomentsCaching
import MomentsHTTP

@Suite struct CoalescingTests {
    @Test func identicalRequestsInFlightShareOneExchange() async throws {
        let transport = ScriptedTransport(delay: .milliseconds(100)) { _, _ in ok() }
        let client = testClient(transport)

        let users = try await withThrowingTaskGroup(of: User.self) { group in
            for _ in 0..<20 { group.addTask { try await client.send(Endpoint<User>(.get, "/u")) } }
            return try await group.reduce(into: []) { $0.append($1) }
        }

        #expect(users.count == 20)
        #expect(transport.calls == 1)
    }

    @Test func oneCallersCancellationDoesNotCancelTheOthers() async throws {
        let transport = ScriptedTransport(delay: .milliseconds(200)) { _, _ in ok() }
        let client = testClient(transport)
        let leaving = Task { try await client.send(Endpoint<User>(.get, "/u")) }
        let staying = Task { try await client.send(Endpoint<User>(.get, "/u")) }
        await transport.waitForCalls(1)

        leaving.cancel()

        #expect(((await leaving.result).error as? HTTPClientError)?.code == .cancelled)
        #expect(try await staying.value.name == "Ada")
        #expect(transport.calls == 1)
    }

    @Test func theSharedExchangeIsCancelledWhenEveryCallerLeaves() async throws {
        let transport = ScriptedTransport(delay: .seconds(30)) { _, _ in ok() }
        let client = testClient(transport)
        let callers = (0..<3).map { _ in Task { try await client.send(Endpoint<User>(.get, "/u")) } }
        await transport.waitForCalls(1)

        for caller in callers { caller.cancel() }
        for caller in callers { _ = await caller.result }

        #expect(await withFailsafe { await client.waitUntilRequestsInFlight(are: 0) })
    }

    @Test func differentBodiesAndNonCacheableRequestsAreNotShared() async throws {
        let transport = ScriptedTransport(delay: .milliseconds(50)) { _, _ in ok() }
        let client = testClient(transport)

        async let a = client.send(Endpoint<User>(.get, "/u").query("v", "1"))
        async let b = client.send(Endpoint<User>(.get, "/u").query("v", "2"))
        async let c = client.send(Endpoint<User>(.post, "/u"))
        async let d = client.send(Endpoint<User>(.post, "/u"))
        _ = try await (a, b, c, d)

        #expect(transport.calls == 4)
    }
}

@Suite struct BatchTests {
    @Test func sendAllKeepsOrderAndTheConcurrencyLimit() async throws {
        let transport = ScriptedTransport(delay: .milliseconds(20)) { _, request in
            ok(#"{"id":\#(request.url.lastPathComponent),"name":"u"}"#)
        }
        let client = testClient(transport)

        let users = try await client.sendAll((0..<30).map { Endpoint<User>(.get, "/u/\($0)") }, maximumConcurrency: 4)

        #expect(users.map(\.id) == Array(0..<30))
        #expect(transport.maximumRunning <= 4)
        #expect(transport.maximumRunning >= 2)
    }

    /// Siblings that end only when cancelled end cancelled: the batch waits for them, and
    /// each says it was cancelled, however long a busy machine took.
    @Test(.timeLimit(.minutes(10))) func sendAllFailsFastAndCancelsTheRest() async throws {
        let cancelled = PThreadMutex(0)
        let transport = ScriptedTransport { _, request in
            if request.url.lastPathComponent == "3" { return status(500) }
            await waitUntilCancelled()
            cancelled.withLock { $0 += 1 }
            throw HTTPClientError.cancelled()
        }
        let client = testClient(transport)

        let error = await #expect(throws: HTTPClientError.self) {
            try await client.sendAll((0..<10).map { Endpoint<User>(.get, "/u/\($0)") }, maximumConcurrency: 5)
        }

        #expect(error?.statusCode == 500)
        #expect(cancelled.withLock { $0 } == transport.calls - 1, "every sibling that was sent was cancelled")
        #expect(await withFailsafe { await client.waitUntilRequestsInFlight(are: 0) })
        #expect(transport.calls <= 5, "requests after the failure were never started")
    }

    @Test func sendAllSettledReturnsEveryOutcome() async throws {
        let transport = ScriptedTransport { _, request in
            Int(request.url.lastPathComponent)! % 3 == 0 ? status(404) : ok()
        }
        let client = testClient(transport)

        let results = await client.sendAllSettled((0..<9).map { Endpoint<User>(.get, "/u/\($0)") })

        #expect(results.count == 9)
        #expect(results.enumerated().allSatisfy { index, result in
            index % 3 == 0 ? (result.error?.statusCode == 404) : ((try? result.get())?.name == "Ada")
        })
    }

    @Test func heterogeneousBatchesReturnTypedResults() async throws {
        let transport = ScriptedTransport { _, request in
            request.url.path.hasSuffix("count") ? ok("42") : ok()
        }
        let client = testClient(transport)

        let (user, count, raw) = try await client.sendAll(Endpoint<User>(.get, "/u"), Endpoint<Int>(.get, "/count"), Endpoint<Data>(.get, "/raw"))

        #expect(user.name == "Ada")
        #expect(count == 42)
        #expect(!raw.isEmpty)
    }

    @Test(.timeLimit(.minutes(10))) func aHeterogeneousBatchReportsTheRealFailure() async throws {
        let cancelled = PThreadMutex(0)
        let transport = ScriptedTransport { _, request in
            if request.url.path.hasSuffix("bad") { return status(418) }
            await waitUntilCancelled()
            cancelled.withLock { $0 += 1 }
            throw HTTPClientError.cancelled()
        }
        let client = testClient(transport)

        let error = await #expect(throws: HTTPClientError.self) {
            _ = try await client.sendAll(Endpoint<User>(.get, "/slow"), Endpoint<User>(.get, "/bad"))
        }

        #expect(error?.statusCode == 418)
        #expect(cancelled.withLock { $0 } == transport.calls - 1, "the sibling that ends only when cancelled was cancelled")
    }
}


@Suite struct LoggingTests {
    @Test func oneRecordPerRequestWithTheEssentials() async throws {
        let logs = LogSink()
        let metrics = MetricsSink()
        let client = testClient(ScriptedTransport { call, _ in call == 1 ? status(503) : ok() }) {
            $0.logHandler = logs.handler
            $0.metricsHandler = metrics.handler
            $0.retryPolicy = RetryPolicy(initialDelay: .milliseconds(1), jitter: 0)
            $0.cache = MemoryResponseCache()
        }

        _ = try await client.send(Endpoint<User>(.get, "/u").query("token", "hidden"))
        _ = try await client.send(Endpoint<User>(.get, "/u").query("token", "hidden").options { $0.cachePolicy = .local })

        #expect(logs.all.count == 2)
        let network = try #require(logs.all.first)
        #expect(network.level == .info)
        #expect(network.metadata["method"] == "GET")
        #expect(network.metadata["url"] == "https://api.example.com/v1/u?…")
        #expect(network.metadata["status"] == "200")
        #expect(network.metadata["attempts"] == "2")
        #expect(network.metadata["cache"] == "miss")
        #expect(network.metadata["request_body"] == nil, "bodies only at debug level")
        #expect(logs.all[1].metadata["cache"] == "hit")
        #expect(!logs.all.map(\.description).joined().contains("hidden"))
        #expect(metrics.all.map(\.attempts) == [2, 0])
        #expect(metrics.all.map(\.isFromCache) == [false, true])
        #expect(metrics.all[0].duration > .zero)
    }

    @Test func debugRecordsCarryCompactRedactedBodies() async throws {
        let logs = LogSink()
        let client = testClient(StubTransport(statusCode: 200, body: Data(#"{"id": 1, "name": "Ada", "accessToken": "zzz"}"#.utf8))) {
            $0.logHandler = logs.handler
            $0.logLevel = .debug
        }
        struct Login: Encodable, Sendable { var user = "ada"; var password = "p@ss" }

        _ = try await client.send(Endpoint<User>(.post, "/login").body(Login()))

        let record = try #require(logs.all.first)
        #expect(record.metadata["request_body"] == #"{"user":"ada","password":"<redacted>"}"# || record.metadata["request_body"] == #"{"password":"<redacted>","user":"ada"}"#)
        #expect(record.metadata["response_body"] == #"{"id": 1, "name": "Ada", "accessToken": "<redacted>"}"#)
    }

    @Test func failuresAreRecordedAtErrorLevel() async throws {
        let logs = LogSink()
        let client = testClient(ScriptedTransport { _, _ in status(404) }) { $0.logHandler = logs.handler }

        await #expect(throws: HTTPClientError.self) { try await client.send(Endpoint<User>(.get, "/u")) }

        #expect(logs.all.count == 1)
        #expect(logs.all.first?.level == .error)
        #expect(logs.all.first?.metadata["status"] == "404")
    }
}
