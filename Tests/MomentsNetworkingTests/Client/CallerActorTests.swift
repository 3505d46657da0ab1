import Foundation
import MomentsHTTP
@testable import MomentsNetworking
import MomentsSupport
import Testing

/// A call made from an actor does its work off that actor: the client's entry points
/// leave the caller's actor, and the steps below them run where they were called from,
/// so an actor that calls the client never has the call's stages or its decoding run
/// on its executor.
@Suite struct CallerActorTests {
    /// Answers whether its decoding ran on a thread of a `ThreadExecutor`.
    private struct WhereDecoded: Request {
        typealias Response = Bool
        var path: String { "/where" }

        func decodeResponse(_ response: HTTPResponse, decoder: JSONDecoder) throws -> Bool {
            ThreadExecutor.isRunningOnAnExecutorThread
        }
    }

    /// An actor that runs on a thread of its own, so where a job runs can be told.
    private actor Caller {
        let executor = ThreadExecutor(name: "caller-actor")
        nonisolated var unownedExecutor: UnownedSerialExecutor { executor.asUnownedSerialExecutor() }

        /// Whether the caller itself runs on its thread (the test's premise), and where
        /// `send` and `response(for:)` decoded.
        func call(_ client: HTTPClient) async throws -> (onItsThread: Bool, sendDecodedThere: Bool, responseDecodedThere: Bool) {
            let onItsThread = ThreadExecutor.isRunningOnAnExecutorThread
            let sent = try await client.send(WhereDecoded())
            let response = try await client.response(for: WhereDecoded())
            return (onItsThread, sent, response.value)
        }

        deinit { executor.shutDown() }
    }

    @Test func aCallFromAnActorIsDecodedOffItsExecutor() async throws {
        let client = HTTPClient(baseURL: URL(string: "https://api.example.com/")!, transport: StubTransport(statusCode: 200))
        let outcome = try await Caller().call(client)
        #expect(outcome.onItsThread)
        #expect(!outcome.sendDecodedThere)
        #expect(!outcome.responseDecodedThere)
    }
}
