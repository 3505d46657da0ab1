import Foundation
import MomentsNetworking
import MomentsTestSupport
import Testing
import MomentsSupport
import MomentsObservability
import MomentsHTTP

/// Tokens "t1", "t2", …; each refresh yields the next. Refreshing can be made to fail.
private final class CountingTokens: TokenProvider {
    let refreshes = PThreadMutex(0)
    let failRefresh: Bool
    let refreshDelay: Duration

    init(failRefresh: Bool = false, refreshDelay: Duration = .milliseconds(50)) {
        self.failRefresh = failRefresh
        self.refreshDelay = refreshDelay
    }

    func currentToken() -> String { "t1" }

    func refreshToken(replacing rejected: String) async throws -> String {
        let count = refreshes.withLock { $0 += 1; return $0 }
        try await Task.sleep(for: refreshDelay)
        if failRefresh { throw ValidationError("refresh endpoint said no to \(rejected)") }
        return "t\(count + 1)"
    }
}

/// Accepts only `Bearer <valid>` (or the custom header).
private func server(valid: String, header: String = "Authorization", prefix: String = "Bearer ") -> StubTransport {
    StubTransport { request in
        request.headers[header] == prefix + valid ? ok() : status(401)
    }
}

@Suite struct AuthenticationTests {
    @Test func theTokenGoesInTheConfiguredHeader() async throws {
        let bearer = StubTransport(statusCode: 200)
        let custom = StubTransport(statusCode: 200)
        let tokens = StaticTokenProvider("abc")

        _ = try await testClient(bearer) {
            $0.authentication = AuthenticationMiddleware(provider: tokens)
        }.send(Endpoint<Data>(.get, "/me"))
        _ = try await testClient(custom) {
            $0.authentication = AuthenticationMiddleware(provider: tokens, header: .custom("X-Api-Auth-Token"))
        }.send(Endpoint<Data>(.get, "/me"))

        #expect(bearer.requests[0].headers["Authorization"] == "Bearer abc")
        #expect(custom.requests[0].headers["X-Api-Auth-Token"] == "abc")
        #expect(custom.requests[0].headers["Authorization"] == nil)
    }

    @Test func a401RefreshesOnceAndRetriesOnce() async throws {
        let tokens = CountingTokens()
        let transport = server(valid: "t2")
        let client = testClient(transport) {
            $0.authentication = AuthenticationMiddleware(provider: tokens)
        }

        let user = try await client.send(Endpoint<User>(.get, "/me"))

        #expect(user.name == "Ada")
        #expect(tokens.refreshes.withLock { $0 } == 1)
        #expect(transport.requests.map { $0.headers["Authorization"] } == ["Bearer t1", "Bearer t2"])
    }

    @Test func aSecond401IsAServerErrorNotALoop() async throws {
        let tokens = CountingTokens()
        let transport = server(valid: "never")
        let client = testClient(transport) {
            $0.authentication = AuthenticationMiddleware(provider: tokens)
        }

        let error = await #expect(throws: HTTPClientError.self) { try await client.send(Endpoint<User>(.get, "/me")) }

        #expect(error?.statusCode == 401)
        #expect(transport.requests.count == 2)
    }

    @Test func manyConcurrent401sCauseExactlyOneRefresh() async throws {
        let tokens = CountingTokens()
        let client = testClient(server(valid: "t2")) {
            $0.authentication = AuthenticationMiddleware(provider: tokens)
            // What is tested is the count of refreshes, not a deadline: forty calls may
            // wait that long for Swift's two shared threads while other suites run.
            $0.timeout = .seconds(300)
        }

        try await withThrowingTaskGroup(of: User.self) { group in
            for index in 0..<40 { group.addTask { try await client.send(Endpoint<User>(.get, "/me/\(index)")) } }
            for try await user in group { #expect(user.id == 1) }
        }

        #expect(tokens.refreshes.withLock { $0 } == 1)
    }

    @Test func aFailedRefreshFailsEveryWaiterClearlyWithoutTheToken() async throws {
        let tokens = CountingTokens(failRefresh: true)
        let logs = LogSink()
        let client = testClient(server(valid: "t2")) {
            $0.authentication = AuthenticationMiddleware(provider: tokens)
            $0.logHandler = logs.handler
            $0.logLevel = .debug
        }

        let results = await withTaskGroup(of: Result<User, any Error>.self) { group in
            for _ in 0..<10 { group.addTask { await Task { try await client.send(Endpoint<User>(.get, "/me")) }.result } }
            return await group.reduce(into: []) { $0.append($1) }
        }

        #expect(tokens.refreshes.withLock { $0 } == 1)
        for result in results {
            let error = result.error as? HTTPClientError
            #expect(error?.code == .authenticationFailure)
            #expect(error?.description.contains("t1") == false)
        }
        #expect(!logs.all.isEmpty)
        #expect(logs.all.allSatisfy { !$0.description.contains("Bearer t1") && !$0.description.contains("t1\"") })
    }
}
