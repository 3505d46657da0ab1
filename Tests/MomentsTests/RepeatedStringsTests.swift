import Foundation
@testable import Moments
import MomentsTestSupport
import Testing

/// The fast reader shares a person's name or avatar that an answer repeats: a string is
/// shared only with one whose raw bytes are the same, however the table's entries
/// collide, so every answer still reads as `JSONDecoder` reads it.
@Suite struct RepeatedStringsTests {
    private struct Envelope: Decodable {
        struct Inner: Decodable { let getMomentsDetailsByUserID: MomentsDetails }
        let data: Inner
    }

    private func standard(_ text: String) -> MomentsDetails? {
        try? JSONDecoder().decode(Envelope.self, from: Data(text.utf8)).data.getMomentsDetailsByUserID
    }

    private func fast(_ text: String) -> MomentsDetails? {
        TimelineFastDecoding.decode(Data(text.utf8), field: "getMomentsDetailsByUserID")
    }

    /// Sizes of padding that give each size of table: none (a short answer keeps
    /// nothing), 16, 32 and 512 entries.
    static let paddings = [0, 5_000, 20_000, 70_000]

    /// An answer whose moments are written by `authors[i]` and liked by `likers[i]`, each
    /// name or avatar given as it is to be written between quotes, followed by `padding`
    /// bytes in a member both readers skip.
    private func answer(authors: [(name: String, avatar: String)], likers: [[String]], padding: Int = 0) -> String {
        let moments = authors.indices.map { index in
            let likes = likers[index].enumerated().map { #"{"id":"u\#($0.offset)","avatar":"\#($0.element)"}"# }.joined(separator: ",")
            return #"{"id":"m\#(index)","userDetails":{"id":"a","name":"\#(authors[index].name)","avatar":"\#(authors[index].avatar)"},"type":"URL","photos":[],"createdDate":"1","likes":[\#(likes)]}"#
        }
        let extensions = padding == 0 ? "" : #","extensions":{"padding":"\#(String(repeating: "p", count: padding))"}"#
        return #"{"data":{"getMomentsDetailsByUserID":{"userDetails":{"id":"0","name":"n","avatar":"a","backgroundImage":"b"},"moments":[\#(moments.joined(separator: ","))]}}\#(extensions)}"#
    }

    /// Avatars of one length that differ only between their first and last eight bytes
    /// (so the hash sees them alike), interleaved and repeated: each reads as itself.
    @Test func stringsAlikeAtBothEndsStayApart() throws {
        let avatars = (0..<40).map { "https:\\/\\/images.example.com\\/" + String(format: "%03d", $0) + "\\/avatars\\/face.jpg" }
        let authors = (0..<400).map { (name: "Name \($0 % 7) of the people here", avatar: avatars[($0 * 17) % avatars.count]) }
        let likers = (0..<400).map { index in (0..<(index % 4)).map { avatars[(index + $0 * 3) % avatars.count] } }
        let text = answer(authors: authors, likers: likers)
        let details = try #require(fast(text))
        #expect(details == standard(text))
        for (index, moment) in details.moments.enumerated() {
            #expect(moment.userDetails.avatar == "https://images.example.com/" + String(format: "%03d", (index * 17) % 40) + "/avatars/face.jpg")
        }
    }

    /// One avatar written with escaped slashes and without: the same string either way.
    @Test(arguments: paddings) func oneStringWrittenTwoWaysReadsTheSame(padding: Int) throws {
        let escaped = #"https:\/\/images.example.com\/avatars\/7.jpg"#
        let plain = "https://images.example.com/avatars/7.jpg"
        let text = answer(authors: [("Some Long Name Here", escaped), ("Some Long Name Here", plain), ("Some Long Name Here", escaped)],
                          likers: [[plain, escaped], [escaped], []], padding: padding)
        let details = try #require(fast(text))
        #expect(details == standard(text))
        #expect(details.moments.allSatisfy { $0.userDetails.avatar == plain })
        #expect(details.moments.flatMap { $0.likes ?? [] }.allSatisfy { $0.avatar == plain })
    }

    /// A string read before does not vouch for one that differs from it by an invalid
    /// byte: the answer is refused, as `JSONDecoder` refuses it.
    @Test(arguments: paddings) func aRepeatedStringWithAnInvalidByteIsRefused(padding: Int) throws {
        let valid = "https://images.example.com/avatars/7.jpg"
        let text = answer(authors: [("Some Long Name Here", valid), ("Some Long Name Here", valid)], likers: [[valid], []], padding: padding)
        #expect(fast(text) != nil)
        var bytes = Array(text.utf8)
        let last = try #require(bytes.indices.last { bytes[$0] == UInt8(ascii: "7") })
        bytes[last] = 0xFF
        let broken = Data(bytes)
        #expect(TimelineFastDecoding.decode(broken, field: "getMomentsDetailsByUserID") == nil)
        #expect((try? JSONDecoder().decode(Envelope.self, from: broken)) == nil)
    }

    /// Random people, with names and avatars from a few bytes that collide often, each
    /// written plain or with escapes, repeated in random order: the reader always agrees
    /// with `JSONDecoder`.
    @Test func randomRepeatsReadAsJSONDecoderReadsThem() throws {
        let seed = UInt64(ProcessInfo.processInfo.environment["MOMENTS_REPEATED_STRINGS_SEED"] ?? "") ?? 7
        var generator = SeededGenerator(seed: seed)
        let pieces = ["a", "b", "/", "é", "東", "🌃", "\\\"", "\\\\", "\\/", "\\u00e9", "\\ud83c\\udf03", "\\n"]
        func person() -> String {
            "https://x.example/" + (0..<Int.random(in: 0...6, using: &generator)).map { _ in pieces.randomElement(using: &generator) ?? "a" }.joined() + "/face.jpg"
        }
        for round in 0..<200 {
            let people = (0..<Int.random(in: 1...30, using: &generator)).map { _ in person() }
            let count = Int.random(in: 1...60, using: &generator)
            let authors = (0..<count).map { _ in (name: people.randomElement(using: &generator) ?? "", avatar: people.randomElement(using: &generator) ?? "") }
            let likers = (0..<count).map { _ in (0..<Int.random(in: 0...3, using: &generator)).map { _ in people.randomElement(using: &generator) ?? "" } }
            let text = answer(authors: authors, likers: likers, padding: Self.paddings.randomElement(using: &generator) ?? 0)
            let details = fast(text)
            #expect(details != nil, "seed \(seed), round \(round): \(text.prefix(3_000))")
            #expect(details == standard(text), "seed \(seed), round \(round): \(text.prefix(3_000))")
        }
    }
}
