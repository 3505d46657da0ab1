import Foundation
import Moments
import MomentsNetworking
import MomentsTestSupport
import Testing
import MomentsGraphQL
import MomentsHTTP
import MomentsBFF

@Suite struct OperationTests {
    private func client(_ transport: StubTransport) -> HTTPClient {
        HTTPClient.patient(baseURL: URL(string: "http://bff.test")!, transport: transport)
    }

    @Test func theQueryPostsQueryOperationNameAndVariables() async throws {
        let transport = StubTransport(statusCode: 200, body: Data(SampleAnswers.oddShapes.utf8))

        _ = try await client(transport).send(GetMomentsByUserID(userID: "0", withLikes: false))

        let sent = try #require(transport.requests.first)
        #expect(sent.method == .post)
        #expect(sent.url.absoluteString == "http://bff.test/graphql")
        #expect(sent.headers["Content-Type"] == "application/json")
        let body = try #require(JSONSerialization.jsonObject(with: sent.body ?? Data()) as? [String: Any])
        #expect(body["operationName"] as? String == "getMomentsDetailsByUserID")
        #expect((body["query"] as? String)?.contains("@include(if: $withLikes)") == true)
        let variables = try #require(body["variables"] as? [String: Any])
        #expect(variables["userID"] as? String == "0")
        #expect(variables["withLikes"] as? Bool == false)
    }

    @Test func theMutationPostsItsVariables() async throws {
        let answer = SampleAnswers.oddShapes.replacingOccurrences(of: "getMomentsDetailsByUserID", with: "updateMomentLike")
        let transport = StubTransport(statusCode: 200, body: Data(answer.utf8))

        let details = try await client(transport).send(UpdateMomentLike(isLiked: true, momentID: "b", userID: "0"))

        let body = try #require(JSONSerialization.jsonObject(with: transport.requests[0].body ?? Data()) as? [String: Any])
        #expect(body["operationName"] as? String == "updateMomentLike")
        let variables = try #require(body["variables"] as? [String: Any])
        #expect(variables.count == 3)
        #expect(variables["momentID"] as? String == "b")
        #expect(variables["userID"] as? String == "0")
        #expect(variables["isLiked"] as? Bool == true)
        #expect(details.moments.count == 2)
        #expect(UpdateMomentLike.isMutation && !GetMomentsByUserID.isMutation)
    }

    /// The operations write their variables without an encoder; what they write must be
    /// what `JSONEncoder` would have written, read back.
    @Test(arguments: ["0", "a\"b\\c", "line\nbreak\u{01}", "Jérôme 🌃", "/path/"])
    func handWrittenVariablesAreTheEncodedVariables(id: String) throws {
        func read(_ data: Data?) throws -> NSDictionary {
            let bytes = try #require(data)
            return try #require(JSONSerialization.jsonObject(with: bytes) as? NSDictionary)
        }
        let query = GetMomentsByUserID(userID: id, withLikes: false)
        #expect(try read(query.encodedVariables) == read(JSONEncoder().encode(query.variables)))
        let like = UpdateMomentLike(isLiked: true, momentID: id + "m", userID: id)
        #expect(try read(like.encodedVariables) == read(JSONEncoder().encode(like.variables)))
        let likeBody = try #require(like.body)
        let body = try #require(JSONSerialization.jsonObject(with: try likeBody.encoded(with: JSONEncoder())) as? [String: Any])
        #expect(body["query"] as? String == UpdateMomentLike.document)
        #expect((body["variables"] as? [String: Any])?["userID"] as? String == id)
    }

    @Test func likesSelectOnlyIDAndAvatar() {
        for document in [GetMomentsByUserID.document, UpdateMomentLike.document] {
            let likes = document.components(separatedBy: "likes").dropFirst().joined()
            let selection = likes.drop { $0 != "{" }.prefix { $0 != "}" }
            #expect(selection.split(whereSeparator: { " {\n".contains($0) }) == ["id", "avatar"])
        }
    }

    @Test func emptyIdentifiersAreRejectedBeforeSending() async throws {
        let transport = StubTransport(statusCode: 200)
        let client = client(transport)

        await #expect(throws: HTTPClientError.self) { try await client.send(GetMomentsByUserID(userID: "")) }
        await #expect(throws: HTTPClientError.self) { try await client.send(UpdateMomentLike(isLiked: true, momentID: "", userID: "0")) }
        #expect(transport.requests.isEmpty)
    }

    @Test func graphQLErrorsKeepMessagesPathsAndPartialData() async throws {
        let answer = #"""
        {"errors": [{"message": "title failed", "locations": [{"line": 3, "column": 5}],
                     "path": ["getMomentsDetailsByUserID", "moments", 0, "title"]},
                    {"message": "second"}],
         "data": {"getMomentsDetailsByUserID": null}}
        """#
        let transport = StubTransport(statusCode: 200, body: Data(answer.utf8))

        let error = await #expect(throws: HTTPClientError.self) { try await client(transport).send(GetMomentsByUserID(userID: "0")) }

        let failure = try #require(error)
        #expect(failure.code == .graphQLFailure)
        #expect(failure.graphQLErrors.map(\.message) == ["title failed", "second"])
        #expect(failure.graphQLErrors.first?.path == [.field("getMomentsDetailsByUserID"), .field("moments"), .index(0), .field("title")])
        #expect(failure.graphQLErrors.first?.locations == [GraphQLError.Location(line: 3, column: 5)])
        let partial = try failure.decodeGraphQLPartialData(as: [String: String?].self)
        #expect(partial == ["getMomentsDetailsByUserID": nil])
        #expect(failure.description.contains("title failed (at getMomentsDetailsByUserID.moments.0.title)"))
    }

    @Test func graphQLErrorsSentWithAFailureStatusAreGraphQLErrors() async throws {
        let answer = #"{"errors": [{"message": "Cannot query field 'nope' on type 'MomentsDetails'."}]}"#
        let transport = StubTransport(statusCode: 400, body: Data(answer.utf8))

        let error = await #expect(throws: HTTPClientError.self) { try await client(transport).send(GetMomentsByUserID(userID: "0")) }

        #expect(error?.code == .graphQLFailure)
        #expect(error?.statusCode == 400)
        #expect(error?.graphQLPartialData == nil)
    }

    @Test func aFailureStatusWithoutGraphQLErrorsIsAServerError() async throws {
        let transport = StubTransport(statusCode: 502, body: Data("<html>bad gateway</html>".utf8))

        let error = await #expect(throws: HTTPClientError.self) { try await client(transport).send(GetMomentsByUserID(userID: "0")) }

        #expect(error?.code == .serverError)
        #expect(error?.statusCode == 502)
    }

    @Test func anAnswerWithNeitherDataNorErrorsIsADecodingFailure() async throws {
        let transport = StubTransport(statusCode: 200, body: Data(#"{"data": null}"#.utf8))

        let error = await #expect(throws: HTTPClientError.self) { try await client(transport).send(GetMomentsByUserID(userID: "0")) }

        #expect(error?.code == .decodingFailure)
        #expect(error?.decodingFailure?.codingPath == "data")
    }
}
