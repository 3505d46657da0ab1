import Foundation
@testable import Moments
import MomentsTestSupport
import Testing

/// The timeline file's bytes as ``TimelineFileWriter`` writes them: JSON that both
/// `JSONDecoder` and the fast reader take back to the same timeline, whatever its
/// strings hold, in pieces of bounded size.
@Suite struct TimelineFileWriterTests {
    /// Characters a string may hold: plain text, JSON's escapes, every control
    /// character, characters outside ASCII of two, three and four bytes.
    private static let alphabet: [Character] = Array("aZ09 /:.-_") + ["\"", "\\", "\u{7F}", "é", "東", "🌃", "\u{2028}"]
        + (0..<0x20).map { Character(Unicode.Scalar(UInt8($0))) }

    private static func string(_ random: inout SeededGenerator, maximum: Int = 24) -> String {
        String((0..<Int.random(in: 0...maximum, using: &random)).map { _ in alphabet.randomElement(using: &random) ?? "a" })
    }

    private static func timeline(_ random: inout SeededGenerator, moments: Int) -> MomentsDetails {
        func maybe<T>(_ make: () -> T) -> T? { Bool.random(using: &random) ? make() : nil }
        return MomentsDetails(
            userDetails: UserDetails(id: string(&random), name: string(&random), avatar: string(&random), backgroundImage: string(&random)),
            moments: (0..<moments).map { index in
                Moment(
                    id: "m\(index)-" + string(&random, maximum: 6),
                    userDetails: Moment.MomentUserDetails(id: maybe { string(&random) }, name: string(&random), avatar: string(&random)),
                    type: Bool.random(using: &random) ? .url : .photos,
                    title: maybe { string(&random) },
                    url: maybe { string(&random) },
                    photos: (0..<Int.random(in: 0...3, using: &random)).map { _ in string(&random) },
                    createdDate: string(&random, maximum: 12),
                    isLiked: maybe { Bool.random(using: &random) },
                    likes: maybe { (0..<Int.random(in: 0...3, using: &random)).map { _ in Moment.LikedUser(id: string(&random), avatar: string(&random)) } }
                )
            }
        )
    }

    private static func written(_ details: MomentsDetails, userID: String, checksum: Int64?) -> (bytes: Data, pieces: [Int]) {
        var bytes = Data()
        var pieces: [Int] = []
        TimelineFileWriter.write(details, userID: userID, version: 2, checksum: checksum) { piece in
            pieces.append(piece.count)
            bytes.append(piece)
        }
        return (bytes, pieces)
    }

    @Test(arguments: 0..<40 as Range<UInt64>)
    func jsonDecoderAndTheFastReaderReadBackWhatWasWritten(seed: UInt64) throws {
        var random = SeededGenerator(seed: seed)
        let details = Self.timeline(&random, moments: Int.random(in: 0...6, using: &random))
        let userID = Self.string(&random)
        let checksum: Int64? = seed % 5 == 0 ? nil : Int64.random(in: .min ... .max, using: &random)
        let (bytes, _) = Self.written(details, userID: userID, checksum: checksum)
        let decoded = try JSONDecoder().decode(TimelineFile.self, from: bytes)
        #expect(decoded.format == TimelineFile.format, "seed \(seed)")
        #expect(decoded.version == 2 && decoded.userID == userID && decoded.checksum == checksum, "seed \(seed)")
        #expect(decoded.details == details, "seed \(seed): JSONDecoder read another timeline")
        let fast = try #require(TimelineFastDecoding.decodeFile(bytes), "seed \(seed): the fast reader refused the file")
        #expect(fast.userID == userID && fast.checksum == checksum && fast.details == details, "seed \(seed): the fast reader read another timeline")
    }

    @Test func aLongTimelineIsWrittenInPiecesOfBoundedSize() throws {
        var random = SeededGenerator(seed: 99)
        let details = Self.timeline(&random, moments: 6_000)
        let (bytes, pieces) = Self.written(details, userID: "0", checksum: 1)
        #expect(pieces.count > 2)
        // A piece is handed on once it passes the size: it holds at most one moment more.
        #expect(pieces.allSatisfy { $0 < TimelineFileWriter.flushSize + 4_096 }, "\(pieces)")
        #expect(try JSONDecoder().decode(TimelineFile.self, from: bytes).details == details)
    }

    @Test func theFileSaysWhatJSONEncoderWouldHaveSaid() throws {
        var random = SeededGenerator(seed: 7)
        let details = Self.timeline(&random, moments: 20)
        let (bytes, _) = Self.written(details, userID: "user", checksum: 42)
        let encoded = try JSONEncoder().encode(TimelineFile(version: 2, userID: "user", details: details, checksum: 42))
        // The same members with the same values, whatever each writer escapes.
        let mine = try JSONSerialization.jsonObject(with: bytes) as? NSDictionary
        let theirs = try JSONSerialization.jsonObject(with: encoded) as? NSDictionary
        #expect(mine != nil && mine == theirs)
    }
}
