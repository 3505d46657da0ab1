import Foundation
import Moments
import MomentsNetworking
import MomentsTestSupport
import Testing
import MomentsHTTP
import MomentsBFF

@Suite struct ModelTests {
    @Test func decodesOptionalUnicodeAndEmptyShapes() throws {
        let details = try GetMomentsByUserID(userID: "0").decodeResponse(
            HTTPResponse(statusCode: 200, body: Data(SampleAnswers.oddShapes.utf8)),
            decoder: JSONDecoder()
        )

        #expect(details.userDetails == Fixtures.owner)
        #expect(details.moments.count == 2)
        let photos = details.moments[0]
        #expect(photos.type == .photos)
        #expect(photos.title == nil)
        #expect(photos.url == nil)
        #expect(photos.photos.count == 2)
        #expect(photos.isLiked == true)
        #expect(photos.likes == [Moment.LikedUser(id: "0", avatar: "https://img/0.jpg")])
        let link = details.moments[1]
        #expect(link.title == "東京の夜 🌃 — café")
        #expect(link.url == "https://swift.org")
        #expect(link.photos.isEmpty)
        #expect(link.likes == [])
    }

    @Test func keepsCreatedDateAsSentAndOffersADate() throws {
        let moment = Fixtures.moment("a")
        #expect(moment.createdDate == "1605521360")
        #expect(moment.createdAt == Date(timeIntervalSince1970: 1_605_521_360))

        var odd = moment
        odd.createdDate = "yesterday"
        #expect(odd.createdAt == nil)
    }

    @Test func encodingThenDecodingGivesAnEqualValue() throws {
        var withoutLikes = Fixtures.moment("c")
        withoutLikes.isLiked = nil
        withoutLikes.likes = nil
        withoutLikes.title = nil
        let original = Fixtures.timeline(moments: [Fixtures.moment("a", likedBy: ["0", "2"]), withoutLikes])

        let decoded = try JSONDecoder().decode(MomentsDetails.self, from: JSONEncoder().encode(original))

        #expect(decoded == original)
    }

    @Test func aMomentsTypeIsNamedInsideMomentAndKeepsTheBFFsSpelling() throws {
        let types = try JSONDecoder().decode([Moment.MomentType].self, from: Data(#"["URL", "PHOTOS"]"#.utf8))
        #expect(types == Moment.MomentType.allCases)
        #expect(String(decoding: try JSONEncoder().encode(Moment.MomentType.url), as: UTF8.self) == #""URL""#)
    }

    @Test func anUnknownMomentTypeIsADecodingErrorNamingTheField() async throws {
        let answer = SampleAnswers.oddShapes.replacingOccurrences(of: #""type": "URL""#, with: #""type": "VIDEO""#)
        let client = HTTPClient.patient(baseURL: URL(string: "http://bff.test")!, transport: StubTransport(statusCode: 200, body: Data(answer.utf8)))

        let error = await #expect(throws: HTTPClientError.self) { try await client.send(GetMomentsByUserID(userID: "0")) }

        #expect(error?.code == .decodingFailure)
        #expect(error?.decodingFailure?.codingPath == "data.getMomentsDetailsByUserID.moments[1].type")
        #expect(error?.decodingFailure?.detail.contains("VIDEO") == true)
    }

    @Test func timelinesFindTheirMoments() {
        let details = Fixtures.timeline(moments: [Fixtures.moment("a"), Fixtures.moment("b")])
        #expect(details.moment(withID: "b")?.id == "b")
        #expect(details.moment(withID: "z") == nil)
    }
}
