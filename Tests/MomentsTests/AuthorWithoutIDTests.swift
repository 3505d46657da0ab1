import Foundation
@testable import Moments
import MomentsGraphQL
import MomentsHTTP
import MomentsNetworking
import MomentsTestSupport
import Testing
import MomentsBFF

/// An answer whose moments name their author by `name` and `avatar` only, as the BFF's
/// own sample answer does: every reader takes it, and every persistence keeps the
/// author's id unknown.
@Suite struct AuthorWithoutIDTests {
    static let answer = SampleAnswers.oddShapes.replacingOccurrences(of: #""userDetails": {"id": "1", "#, with: #""userDetails": {"#)

    @Test func theFastReaderAndJSONDecoderBothReadIt() throws {
        #expect(Self.answer != SampleAnswers.oddShapes)
        let envelope = try JSONDecoder().decode(GraphQLEnvelope.self, from: Data(Self.answer.utf8))
        #expect(envelope.data.getMomentsDetailsByUserID.moments.map(\.userDetails.id) == [nil, nil])
        let fast = try #require(TimelineFastDecoding.decode(Data(Self.answer.utf8), field: "getMomentsDetailsByUserID"))
        #expect(fast == envelope.data.getMomentsDetailsByUserID)
        #expect(fast.moments[0].userDetails == Moment.MomentUserDetails(id: nil, name: "Taylor", avatar: "https://img/1.jpg"))
    }

    @Test func theQueryReadsIt() async throws {
        let transport = StubTransport(statusCode: 200, body: Data(Self.answer.utf8))
        let client = HTTPClient.patient(baseURL: URL(string: "http://bff.test")!, transport: transport)
        let details = try await client.send(GetMomentsByUserID(userID: "0"))
        #expect(details.moments.map(\.id) == ["a", "b"])
        #expect(details.moments.allSatisfy { $0.userDetails.id == nil })
    }

    @Test func everyPersistenceKeepsTheIDUnknown() async throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let details = try JSONDecoder().decode(GraphQLEnvelope.self, from: Data(Self.answer.utf8)).data.getMomentsDetailsByUserID
        let persistences: [any MomentsPersistence] = [
            InMemoryPersistence(),
            try await JSONFilePersistence.open(directory: directory.url.appendingPathComponent("json")),
        ]
        for persistence in persistences {
            try await persistence.save(details, for: "0")
            #expect(try await persistence.load(userID: "0") == details, "\(type(of: persistence))")
        }
    }

    /// The answer's envelope, read by `JSONDecoder` alone.
    private struct GraphQLEnvelope: Decodable {
        struct Payload: Decodable { let getMomentsDetailsByUserID: MomentsDetails }
        let data: Payload
    }
}
