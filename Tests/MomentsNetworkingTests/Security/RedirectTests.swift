import Foundation
import MomentsNetworking
import MomentsTestSupport
import Testing
import MomentsHTTP

/// Redirects through `URLSessionTransport` against two real servers (two origins): the
/// platform never follows them on its own; the client follows them under its policy.
@Suite(.serialized) struct RedirectTests {
    let home: ScriptServer
    let elsewhere: ScriptServer

    init() async throws {
        home = try await ScriptServer(script: "Tools/fixture-server/fixture_server.py")
        elsewhere = try await ScriptServer(script: "Tools/fixture-server/fixture_server.py")
    }

    private func stop() {
        home.stop()
        elsewhere.stop()
    }

    private func client(_ policy: RedirectPolicy = .sameOrigin) -> HTTPClient {
        HTTPClient.patient(baseURL: home.baseURL) {
            $0.redirectPolicy = policy
            $0.authentication = AuthenticationMiddleware(provider: StaticTokenProvider("SECRET123"))
            $0.defaultHeaders["Cookie"] = "session=COOKIE456"
        }
    }

    private func redirect(_ status: Int, to url: String) -> Endpoint<Echo> {
        Endpoint<Echo>(.post, "/redirect").query("status", String(status)).query("to", url).body(["hello": "world"])
    }

    @Test(arguments: [307, 308])
    func a307Or308KeepsTheMethodAndTheBody(status: Int) async throws {
        defer { stop() }
        let echo = try await client().send(redirect(status, to: home.baseURL.absoluteString + "/echo/next"))

        #expect(echo.method == "POST")
        #expect(echo.rawPath == "/echo/next")
        #expect(echo.body == #"{"hello":"world"}"#)
        #expect(echo.headers["authorization"] == "Bearer SECRET123", "same origin keeps credentials")
    }

    @Test(arguments: [301, 302, 303])
    func aPostRedirectedBy301302Or303BecomesAGetWithoutBody(status: Int) async throws {
        defer { stop() }
        let echo = try await client().send(redirect(status, to: "/echo/after"))

        #expect(echo.method == "GET")
        #expect(echo.body.isEmpty)
        #expect(echo.headers["content-type"] == nil)
    }

    @Test func anotherOriginIsRefusedByDefaultAndNamesTheChain() async throws {
        defer { stop() }
        let target = elsewhere.baseURL.absoluteString + "/echo/stolen"
        let error = await #expect(throws: HTTPClientError.self) {
            try await client().send(redirect(307, to: target))
        }

        #expect(error?.code == .redirectFailure)
        #expect(error?.description.contains(target) == true, "\(String(describing: error))")
        #expect(error?.description.contains("/redirect") == true)
    }

    @Test(arguments: [307, 308, 302])
    func credentialsNeverFollowARedirectToAnotherOrigin(status: Int) async throws {
        defer { stop() }
        let echo = try await client(.anyOrigin).send(redirect(status, to: elsewhere.baseURL.absoluteString + "/echo/other"))

        #expect(echo.rawPath == "/echo/other")
        #expect(echo.headers["authorization"] == nil)
        #expect(echo.headers["cookie"] == nil)
        if status != 302 { #expect(echo.body == #"{"hello":"world"}"#) }
    }

    @Test func aLoopEndsInATypedError() async throws {
        defer { stop() }
        let error = await #expect(throws: HTTPClientError.self) {
            try await client().send(redirect(307, to: "/loop"))
        }
        #expect(error?.code == .redirectFailure)
        #expect(error?.reason.contains("loop") == true, "\(String(describing: error))")
    }

    @Test func tooManyHopsEndInATypedError() async throws {
        defer { stop() }
        var target = home.baseURL.absoluteString + "/echo/end"
        for _ in 0..<3 {
            target = home.baseURL.absoluteString + "/redirect?status=302&to=" + (target.addingPercentEncoding(withAllowedCharacters: .alphanumerics) ?? "")
        }
        let error = await #expect(throws: HTTPClientError.self) {
            try await client(RedirectPolicy(scope: .sameOrigin, maximumHops: 2)).send(Endpoint<Echo>(.get, String(target.dropFirst(home.baseURL.absoluteString.count))))
        }
        #expect(error?.code == .redirectFailure)
        #expect(error?.reason.contains("more than 2 redirects") == true, "\(String(describing: error))")

        // Within the limit the chain is followed to its end.
        let echo = try await client().send(Endpoint<Echo>(.get, String(target.dropFirst(home.baseURL.absoluteString.count))))
        #expect(echo.rawPath == "/echo/end")
    }

    @Test func withNeverTheRedirectIsTheAnswer() async throws {
        defer { stop() }
        let error = await #expect(throws: HTTPClientError.self) {
            try await client(.never).send(redirect(307, to: "/echo"))
        }
        #expect(error?.code == .serverError)
        #expect(error?.statusCode == 307)
    }
}
