import Foundation
import Moments
import MomentsNetworking
import MomentsTestSupport
import Testing
import MomentsGraphQL
import MomentsHTTP
import MomentsBFF

/// `GraphQLMomentsService` through the real `URLSessionTransport` against the reference BFF.
@Suite(.serialized) struct GraphQLMomentsServiceTests {
    let bff: ReferenceBFF
    let service: GraphQLMomentsService

    init() async throws {
        bff = try await ReferenceBFF()
        service = Self.service(of: bff, timeout: .seconds(60))
    }

    /// A service for `bff`: calls that succeed are given all the time a busy machine may
    /// need; those about deadlines give their own.
    private static func service(of bff: ReferenceBFF, timeout: Duration) -> GraphQLMomentsService {
        GraphQLMomentsService(client: HTTPClient.patient(baseURL: bff.baseURL, transport: URLSessionTransport()) {
            $0.timeout = timeout
            $0.maximumResponseSize = 256 * 1024
        })
    }

    @Test func fetchesTheSampleTimeline() async throws {
        defer { bff.stop() }
        let details = try await service.getMoments(userID: "0")

        #expect(details.userDetails.id == "0")
        #expect(details.userDetails.name == "Jake Lin")
        #expect(details.moments.map(\.id) == ["0", "1", "2", "3"])
        #expect(details.moments[1].title == nil)
        #expect(details.moments[1].url == nil)
        #expect(details.moments[2].title == "東京の夜 🌃 — café")
        #expect(details.moments[3].photos.isEmpty)
        #expect(details.moments.map(\.isLiked) == [false, false, true, false])
        #expect(details.moments[0].likes?.map(\.id) == ["1", "2"])
        #expect(details.moments[0].createdAt == Date(timeIntervalSince1970: 1_605_521_360))
    }

    @Test func withoutLikesLeavesLikesOut() async throws {
        defer { bff.stop() }
        let details = try await service.client.send(GetMomentsByUserID(userID: "0", withLikes: false))

        #expect(details.moments.count == 4)
        #expect(details.moments.allSatisfy { $0.isLiked == nil && $0.likes == nil })
    }

    @Test func likesAndUnlikes() async throws {
        defer { bff.stop() }
        let liked = try await service.updateLike(true, momentID: "1", fromUserID: "0")
        #expect(liked.moment(withID: "1")?.isLiked == true)
        #expect(liked.moment(withID: "1")?.likes?.map(\.id) == ["0"])
        #expect(try await service.getMoments(userID: "0").moment(withID: "1")?.isLiked == true)

        let unliked = try await service.updateLike(false, momentID: "1", fromUserID: "0")
        #expect(unliked.moment(withID: "1")?.isLiked == false)
        #expect(unliked.moment(withID: "1")?.likes == [])
    }

    @Test func likingTwiceChangesNothing() async throws {
        defer { bff.stop() }
        let once = try await service.updateLike(true, momentID: "0", fromUserID: "0")
        let twice = try await service.updateLike(true, momentID: "0", fromUserID: "0")

        #expect(once == twice)
        #expect(twice.moment(withID: "0")?.likes?.map(\.id) == ["1", "2", "0"])
    }

    @Test func anUnknownMomentIsNotAnError() async throws {
        defer { bff.stop() }
        let before = try await service.getMoments(userID: "0")
        let after = try await service.updateLike(true, momentID: "no-such-moment", fromUserID: "0")

        #expect(after == before)
    }

    @Test func anUnknownUserIsAGraphQLError() async throws {
        defer { bff.stop() }
        let error = await #expect(throws: HTTPClientError.self) { try await service.getMoments(userID: "nobody") }

        #expect(error?.code == .graphQLFailure)
        #expect(error?.graphQLErrors.first?.path == [.field("getMomentsDetailsByUserID")])
    }

    @Test func aDocumentTheSchemaRejectsIsAGraphQLErrorWithStatus400() async throws {
        struct BadQuery: GraphQLOperation {
            typealias Response = MomentsDetails
            struct ResponseData: Decodable, Sendable { var getMomentsDetailsByUserID: MomentsDetails }
            static let document = #"query bad { getMomentsDetailsByUserID(userID: "0") { nope } }"#
            static let operationName = "bad"
            var variables: [String: String] { [:] }
            func extract(_ data: ResponseData) -> MomentsDetails { data.getMomentsDetailsByUserID }
        }
        defer { bff.stop() }
        let error = await #expect(throws: HTTPClientError.self) { try await service.client.send(BadQuery()) }

        #expect(error?.code == .graphQLFailure)
        #expect(error?.statusCode == 400)
        #expect(error?.graphQLErrors.first?.message.contains("nope") == true)
    }

    // MARK: Injected faults

    private func failure(after fault: [String: any Sendable], timeout: Duration = .seconds(60)) async throws -> HTTPClientError? {
        try await bff.injectFault(fault)
        let service = Self.service(of: bff, timeout: timeout)
        return await #expect(throws: HTTPClientError.self) { try await service.getMoments(userID: "0") }
    }

    @Test func failureStatusesAreServerErrors() async throws {
        defer { bff.stop() }
        let error = try await failure(after: ["kind": "status", "status": 503, "retryAfter": "3"])

        #expect(error?.code == .serverError)
        #expect(error?.statusCode == 503)
        #expect(error?.response?.headers["Retry-After"] == "3")
        #expect(try await service.getMoments(userID: "0").moments.count == 4)
    }

    /// A connection closed without an answer is what a dropped kept-alive connection
    /// gives: a query gets one more attempt on a fresh connection; closed every time,
    /// it is a transport failure.
    @Test func aResetIsRetriedOnceThenATransportFailure() async throws {
        defer { bff.stop() }
        try await bff.injectFault(["kind": "reset", "count": 1])
        #expect(try await service.getMoments(userID: "0").moments.count == 4)

        let error = try await failure(after: ["kind": "reset", "count": 3])
        #expect(error?.code == .transportFailure)
    }

    @Test func aTruncatedAnswerIsATransportFailure() async throws {
        defer { bff.stop() }
        let error = try await failure(after: ["kind": "truncated"])
        #expect(error?.transportFailure?.kind == .truncatedResponse)
    }

    @Test func aSlowAnswerTimesOut() async throws {
        defer { bff.stop() }
        // Past the deadline, the 30 s answer would have arrived and been returned.
        let error = try await failure(after: ["kind": "slow", "seconds": 30], timeout: .seconds(3))
        #expect(error?.transportFailure?.kind == .timedOut)
    }

    @Test func aServerThatNeverFinishesTimesOut() async throws {
        defer { bff.stop() }
        let error = try await failure(after: ["kind": "hang"], timeout: .seconds(3))
        #expect(error?.transportFailure?.kind == .timedOut)
    }

    @Test(arguments: ["malformed", "html", "empty"])
    func unreadableAnswersAreDecodingFailures(kind: String) async throws {
        defer { bff.stop() }
        let error = try await failure(after: ["kind": kind])
        #expect(error?.code == .decodingFailure)
        #expect(error?.decodingFailure?.typeName == "MomentsDetails")
    }

    @Test func graphQLErrorsWithAndWithoutPartialData() async throws {
        defer { bff.stop() }
        let bare = try await failure(after: ["kind": "graphqlError", "message": "boom"])
        let partial = try await failure(after: ["kind": "graphqlError", "partial": true])

        #expect(bare?.code == .graphQLFailure)
        #expect(bare?.graphQLErrors.map(\.message) == ["boom"])
        #expect(bare?.graphQLPartialData == nil)
        #expect(partial?.code == .graphQLFailure)
        let data = try #require(try partial?.decodeGraphQLPartialData(as: GetMomentsByUserID.ResponseData.self))
        #expect(data.getMomentsDetailsByUserID.moments.count == 4)
    }

    @Test func anAnswerOverTheSizeLimitIsRefused() async throws {
        defer { bff.stop() }
        let error = try await failure(after: ["kind": "large", "bytes": 1_000_000])
        #expect(error?.code == .responseTooLarge)
    }
}
