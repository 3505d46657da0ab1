import Foundation
@testable import MomentsNetworking
import MomentsTesting
import MomentsTestSupport
import Testing
import MomentsHTTP

/// ``TransportStage``: what is left of the deadline goes with the request (and in the
/// deadline header), and header values are checked the same way for every transport.
@Suite struct TransportStageTests {
    private let clock = ManualClock()

    @Test func theRequestCarriesWhatIsLeftOfItsDeadline() async throws {
        let transport = StubTransport(statusCode: 200, body: Data())
        let stage = TransportStage(transport: transport, clock: clock, deadlineHeader: "X-Deadline-Ms", instruments: StageHarness.instruments())
        let call = StageHarness.call(clock: clock, deadline: .seconds(5))
        clock.advance(by: .milliseconds(1_250))
        _ = try await CallPipeline([stage]).send(StageHarness.request(), call)
        #expect(transport.requests.first?.timeout == .milliseconds(3_750))
        #expect(transport.requests.first?.headers["X-Deadline-Ms"] == "3750")
        clock.advance(by: .seconds(4))
        let error = await #expect(throws: HTTPClientError.self) { try await CallPipeline([stage]).send(StageHarness.request(), call) }
        #expect(error?.transportFailure?.kind == .timedOut)
        #expect(transport.requests.count == 1, "nothing is sent once the deadline has passed")
    }

    @Test(arguments: ["a\r\nInjected: yes", "a\nb", "cut\u{0}here"])
    func aHeaderValueWithALineBreakOrNULIsRefusedBeforeAnythingIsSent(value: String) async throws {
        let transport = StubTransport(statusCode: 200, body: Data())
        let stage = TransportStage(transport: transport, clock: clock, deadlineHeader: nil, instruments: StageHarness.instruments())
        var request = StageHarness.request()
        request.headers["X-Note"] = value
        let error = await #expect(throws: HTTPClientError.self) { try await CallPipeline([stage]).send(request, StageHarness.call(clock: clock)) }
        #expect(error?.code == .invalidRequest)
        #expect(transport.requests.isEmpty)
    }
}
