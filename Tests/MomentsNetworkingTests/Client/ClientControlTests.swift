import Foundation
import MomentsNetworking
import MomentsSupport
import MomentsTestSupport
import Testing
import MomentsHTTP

@Suite struct ClientControlTests {
    @Test func cancelAllCancelsEveryRequestInFlight() async throws {
        // Ten minutes each: a request the cancellation missed would end in success.
        let transport = ScriptedTransport(delay: .seconds(600)) { _, _ in ok() }
        let client = testClient(transport) { $0.timeout = .seconds(900) }
        let tasks = (0..<5).map { index in Task { try await client.send(Endpoint<Data>(.get, "/slow/\(index)")) } }
        await transport.waitForCalls(5)
        #expect(await withFailsafe { await client.waitUntilRequestsInFlight(are: 5) })

        client.cancelAll()
        for task in tasks {
            let result = await task.result
            #expect((result.error as? HTTPClientError)?.code == .cancelled)
        }

        #expect(await withFailsafe { await client.waitUntilRequestsInFlight(are: 0) })
    }

    @Test func theConcurrencyLimitAdmitsHigherPriorityFirst() async throws {
        let order = PThreadMutex<[String]>([])
        let gate = PThreadMutex<Bool>(false)
        let transport = ScriptedTransport { _, request in
            order.withLock { $0.append(request.url.lastPathComponent) }
            while !gate.withLock({ $0 }) { try await Task.sleep(for: .milliseconds(2)) }
            return ok()
        }
        let client = testClient(transport) { $0.maximumConcurrentRequests = 1 }

        let first = Task { try await client.send(Endpoint<Data>(.get, "/first")) }
        await transport.waitForCalls(1)
        var waiting: [Task<Data, any Error>] = []
        for (index, (path, priority)) in [("low", RequestPriority.low), ("normal", .normal), ("high", .high), ("normal2", .normal)].enumerated() {
            waiting.append(Task { try await client.send(Endpoint<Data>(.get, "/\(path)").options { $0.priority = priority }) })
            // Queued (with its priority and its turn) before the next one is sent.
            #expect(await withFailsafe { await client.waitUntilRequestsWaitingForASlot(are: index + 1) })
        }
        #expect(transport.calls == 1)
        gate.withLock { $0 = true }
        _ = try await first.value
        for task in waiting { _ = try await task.value }

        #expect(order.withLock { $0 } == ["first", "high", "normal", "normal2", "low"])
        #expect(transport.maximumRunning == 1)
    }

    @Test func aWaitingRequestCanBeCancelled() async throws {
        let gate = Latch()
        let transport = ScriptedTransport { call, _ in
            if call == 1 { await gate.wait() }
            return ok()
        }
        let client = testClient(transport) { $0.maximumConcurrentRequests = 1 }
        let first = Task { try await client.send(Endpoint<Data>(.get, "/a")) }
        await transport.waitForCalls(1)
        let second = Task { try await client.send(Endpoint<Data>(.get, "/b")) }
        // Registered means its own task is waiting (for the slot the first one holds).
        #expect(await withFailsafe { await client.waitUntilRequestsInFlight(are: 2) })

        second.cancel()
        gate.open()

        #expect(((await second.result).error as? HTTPClientError)?.code == .cancelled)
        _ = try await first.value
        #expect(transport.calls == 1)
        _ = try await client.send(Endpoint<Data>(.get, "/c"))
        #expect(transport.calls == 2)
    }

    @Test func aLatestWinsRequestCancelsTheOneItReplaces() async throws {
        let transport = ScriptedTransport { call, _ in
            if call == 1 { do { try await Task.sleep(for: .seconds(30)) } catch { throw HTTPClientError.cancelled() } }
            return ok(#""second""#)
        }
        let client = testClient(transport)

        let first = Task { try await client.send(Endpoint<String>(.get, "/search").query("q", "a").options { $0.latestWinsKey = "search" }) }
        await transport.waitForCalls(1)
        let second = try await client.send(Endpoint<String>(.get, "/search").query("q", "ab").options { $0.latestWinsKey = "search" })

        #expect(second == "second")
        #expect(((await first.result).error as? HTTPClientError)?.code == .cancelled)
    }
}
