import Foundation
@testable import Moments
import MomentsNetworking
import MomentsTestSupport
import Testing
import MomentsTestTraits
import MomentsHTTP
import MomentsBFF

/// The fast timeline reader must agree with `JSONDecoder` whenever it answers.
@Suite(.ownThread) struct FastDecodingTests {
    private struct Envelope: Decodable {
        struct Inner: Decodable { let getMomentsDetailsByUserID: MomentsDetails }
        let data: Inner
    }

    private func standard(_ body: Data) -> MomentsDetails? {
        try? JSONDecoder().decode(Envelope.self, from: body).data.getMomentsDetailsByUserID
    }

    private func fast(_ text: String) -> MomentsDetails? {
        TimelineFastDecoding.decode(Data(text.utf8), field: "getMomentsDetailsByUserID")
    }

    @Test func cleanAnswersDecodeToTheSameValue() throws {
        let fixture = try #require(fast(SampleAnswers.oddShapes))
        #expect(fixture == standard(Data(SampleAnswers.oddShapes.utf8)))

        for count in [0, 1, 7, 300] {
            let details = SampleTimelines.timeline(user: "u\(count)", moments: count)
            let body = try JSONEncoder().encode(["data": ["getMomentsDetailsByUserID": details]])
            #expect(TimelineFastDecoding.decode(body, field: "getMomentsDetailsByUserID") == details)
        }
    }

    @Test func escapesAndUnicodeAreRead() throws {
        let text = #"{"data":{"getMomentsDetailsByUserID":{"userDetails":{"id":"0","name":"J\u00e9r\u00f4me \"JJ\" \\ \/ \n\t","avatar":"a","backgroundImage":"b"},"moments":[{"id":"m","userDetails":{"id":"1","name":"\ud83c\udf03 night","avatar":"x"},"type":"URL","title":"東京","url":null,"photos":[],"createdDate":"1"}]}},"errors":null}"#
        let details = try #require(fast(text))
        #expect(details == standard(Data(text.utf8)))
        #expect(details.userDetails.name == "Jérôme \"JJ\" \\ / \n\t")
        #expect(details.moments[0].userDetails.name == "🌃 night")
        #expect(details.moments[0].isLiked == nil && details.moments[0].likes == nil && details.moments[0].url == nil)
    }

    @Test(arguments: [
        #"{"errors":[{"message":"boom"}],"data":null}"#,
        #"{"data":{"getMomentsDetailsByUserID":null}}"#,
        #"{"data":{"getMomentsDetailsByUserID":{"userDetails":{"id":"0","name":"n","avatar":"a","backgroundImage":"b"},"moments":[{"id":"m","userDetails":{"id":"1","name":"n","avatar":"a"},"type":"VIDEO","photos":[],"createdDate":"1"}]}}}"#,
        #"{"data":{"getMomentsDetailsByUserID":{"userDetails":{"id":"0","id":"1","name":"n","avatar":"a","backgroundImage":"b"},"moments":[]}}}"#,
        #"{"data":{"getMomentsDetailsByUserID":{"userDetails":{"id":0,"name":"n","avatar":"a","backgroundImage":"b"},"moments":[]}}}"#,
        #"{"data":{"getMomentsDetailsByUserID":{"userDetails":{"id":"0","name":"n","avatar":"a","backgroundImage":"b"},"moments":[]}}} trailing"#,
        #"{"data":{"getMomentsDetailsByUserID":{"userDetails":{"id":"0","name":"n","avatar":"a","backgroundImage":"b"},"moments":[],}}}"#,
        #"{"data":{"getMomentsDetailsByUserID":{"userDetails":{"id":"0","name":"n","avatar":"a"},"moments":[]}}}"#,
    ])
    func anythingUnexpectedIsLeftToJSONDecoder(text: String) {
        #expect(fast(text) == nil)
    }

    /// The type is matched on its bytes: each way of writing a known type reads as
    /// `JSONDecoder` reads it, and anything near it but not it is left to `JSONDecoder`.
    @Test(arguments: [
        (#""URL""#, Moment.MomentType.url), (#""PHOTOS""#, .photos), (#""U\u0052L""#, .url), (#""PHOTO\u0053""#, .photos),
        (#" "URL" "#, .url), (#""url""#, nil), (#""URLS""#, nil), (#""UR""#, nil), (#""PHOTOS ""#, nil), (#""""#, nil),
        (#""\u0055RL\n""#, nil), (#"null"#, nil), (#"1"#, nil),
    ] as [(String, Moment.MomentType?)])
    func theTypeIsReadFromItsBytesAsJSONDecoderReadsIt(type: String, expected: Moment.MomentType?) {
        let text = #"{"data":{"getMomentsDetailsByUserID":{"userDetails":{"id":"0","name":"n","avatar":"a","backgroundImage":"b"},"moments":[{"id":"m","userDetails":{"id":"1","name":"n","avatar":"a"},"type":"#
            + type + #","photos":[],"createdDate":"1"}]}}}"#
        let read = fast(text)
        #expect(read?.moments.first?.type == expected)
        #expect(read == standard(Data(text.utf8)))
    }

    @Test func deepNestingIsRefusedNotACrash() {
        let deep = String(repeating: "[", count: 100_000) + String(repeating: "]", count: 100_000)
        let text = #"{"data":{"getMomentsDetailsByUserID":{"extra":"# + deep + #","userDetails":{"id":"0","name":"n","avatar":"a","backgroundImage":"b"},"moments":[]}}}"#
        #expect(fast(text) == nil)
    }

    @Test func invalidUTF8IsRefused() {
        var bytes = Array(#"{"data":{"getMomentsDetailsByUserID":{"userDetails":{"id":"0","name":"X","avatar":"a","backgroundImage":"b"},"moments":[]}}}"#.utf8)
        let index = bytes.firstIndex(of: UInt8(ascii: "X"))!
        bytes[index] = 0xFF
        #expect(TimelineFastDecoding.decode(Data(bytes), field: "getMomentsDetailsByUserID") == nil)
    }

    @Test func invalidUTF8InAStringWithEscapesIsRefused() {
        var bytes = Array(#"{"data":{"getMomentsDetailsByUserID":{"userDetails":{"id":"0","name":"a\/X\n","avatar":"a","backgroundImage":"b"},"moments":[]}}}"#.utf8)
        let index = bytes.firstIndex(of: UInt8(ascii: "X"))!
        bytes[index] = 0xC3  // a lead byte with no continuation
        #expect(TimelineFastDecoding.decode(Data(bytes), field: "getMomentsDetailsByUserID") == nil)
    }

    @Test(arguments: [#"a\x"#, #"\u12"#, #"\u12G4"#, #"\ud800"#, #"\ud800\u0041"#, #"\udc00"#, #"ab\"#])
    func malformedEscapesAreLeftToJSONDecoder(name: String) {
        let text = #"{"data":{"getMomentsDetailsByUserID":{"userDetails":{"id":"0","name":""# + name + #"","avatar":"a","backgroundImage":"b"},"moments":[]}}}"#
        #expect(fast(text) == nil)
        #expect(standard(Data(text.utf8)) == nil)
    }

    /// Random text written both ways a server may escape it (as `JSONEncoder` does, and
    /// with every character as `\u` escapes) reads back as itself.
    @Test func randomTextReadsBackWhicheverWayItIsEscaped() throws {
        var generator = SeededGenerator(seed: 11)
        let alphabet: [Character] = ["a", "Z", "0", " ", "/", "\\", "\"", "\n", "\t", "\u{01}", "\u{1F}", "é", "東", "🌃", "\u{7F}", "\u{FFFD}"]
        for round in 0..<2_000 {
            let name = "name-" + String((0..<Int.random(in: 0...24, using: &generator)).map { _ in alphabet.randomElement(using: &generator)! })
            var details = SampleTimelines.timeline(user: "0", moments: 1)
            details.userDetails.name = name
            let encoded = try JSONEncoder().encode(["data": ["getMomentsDetailsByUserID": details]])
            #expect(TimelineFastDecoding.decode(encoded, field: "getMomentsDetailsByUserID")?.userDetails.name == name, "round \(round)")

            let escaped = name.utf16.map { String(format: "\\u%04x", $0) }.joined()
            let plain = try JSONEncoder().encode(["data": ["getMomentsDetailsByUserID": details]])
            let quoted = String(decoding: try JSONEncoder().encode(name), as: UTF8.self)
            let text = String(decoding: plain, as: UTF8.self).replacingOccurrences(of: quoted, with: "\"" + escaped + "\"")
            #expect(fast(text)?.userDetails.name == name, "round \(round): \(text)")
        }
    }

    @Test func mutatedAnswersNeverDisagree() throws {
        var generator = SeededGenerator(seed: 42)
        let original = Array(BenchmarkLikeData.body)
        var answered = 0
        for _ in 0..<3_000 {
            var bytes = original
            for _ in 0..<Int.random(in: 1...3, using: &generator) {
                let index = Int.random(in: 0..<bytes.count, using: &generator)
                switch Int.random(in: 0..<3, using: &generator) {
                case 0: bytes[index] = UInt8.random(in: 0...255, using: &generator)
                case 1: bytes.remove(at: index)
                default: bytes.insert(bytes[index], at: index)
                }
            }
            let body = Data(bytes)
            if let value = TimelineFastDecoding.decode(body, field: "getMomentsDetailsByUserID") {
                answered += 1
                #expect(value == standard(body), "the fast reader disagreed with JSONDecoder on: \(String(decoding: body, as: UTF8.self))")
            }
        }
        #expect(answered > 0)
    }

    /// The list of moments storage keeps (`PostgresPersistence` reads a timeline's rows
    /// with it): equal to `JSONDecoder`'s, and `nil` whenever the text is anything else.
    @Test func storedMomentListsDecodeAsJSONDecoderDecodesThem() throws {
        let encoder = JSONEncoder()
        encoder.outputFormatting = .sortedKeys
        let moments = SampleTimelines.timeline(user: "x", moments: 40).moments
        let text = String(decoding: try encoder.encode(moments), as: UTF8.self)
        #expect(TimelineFastDecoding.decodeMoments(text) == moments)
        #expect(TimelineFastDecoding.decodeMoments("[]") == [])
        var generator = SeededGenerator(seed: 7)
        var answered = 0
        for _ in 0..<2_000 {
            var bytes = Array(text.utf8)
            let index = Int.random(in: 0..<bytes.count, using: &generator)
            bytes[index] = UInt8.random(in: 0x20...0x7E, using: &generator)
            let mutated = String(decoding: bytes, as: UTF8.self)
            guard let fast = TimelineFastDecoding.decodeMoments(mutated) else { continue }
            answered += 1
            #expect(fast == (try? JSONDecoder().decode([Moment].self, from: Data(mutated.utf8))), "disagreed on \(mutated)")
        }
        #expect(answered > 0)
        #expect(TimelineFastDecoding.decodeMoments("{}") == nil)
        #expect(TimelineFastDecoding.decodeMoments("[{}]") == nil)
    }

    /// Text is read eight bytes at a time: every kind of special byte (quote, backslash,
    /// escape, control character, byte outside ASCII, valid or not) at every offset of a
    /// word, and strings cut off at the end of the input, read as `JSONDecoder` reads them.
    @Test func specialBytesAreFoundWhereverTheyFallInAWord() throws {
        var generator = SeededGenerator(seed: 2_026)
        let pieces: [[UInt8]] = [
            Array("a".utf8), Array("Z0".utf8), Array(#"\/"#.utf8), Array(#"\""#.utf8), Array(#"\\"#.utf8), Array(#"\n"#.utf8),
            Array(#"\u00e9"#.utf8), Array(#"\ud83c\udf03"#.utf8), Array("é".utf8), Array("東".utf8), Array("🌃".utf8),
            [0xC3], [0xFF], [0x80], [0xF0, 0x90, 0x80], [0x01], [0x1F], [0x7F], [0x22], [0x5C],
        ]
        var answered = 0
        for round in 0..<6_000 {
            let padding = [UInt8](repeating: UInt8(ascii: "x"), count: Int.random(in: 0...8, using: &generator))
            var name: [UInt8] = []
            for _ in 0..<Int.random(in: 0...12, using: &generator) { name += pieces[Int.random(in: 0..<pieces.count, using: &generator)] }
            var bytes = Array(#"{"data":{"getMomentsDetailsByUserID":{"userDetails":{"id":""#.utf8) + padding
                + Array(#"","name":""#.utf8) + name + Array(#"","avatar":"a","backgroundImage":"b"},"moments":[]}}}"#.utf8)
            if round % 4 == 3 {
                // Cut off inside or just after the name: the string runs into the end.
                let nameStart = bytes.count - 53 - name.count
                bytes.removeSubrange(min(bytes.count, nameStart + Int.random(in: 0...name.count + 1, using: &generator))...)
            }
            let body = Data(bytes)
            let expected = standard(body)
            let read = TimelineFastDecoding.decode(body, field: "getMomentsDetailsByUserID")
            if read != nil { answered += 1 }
            #expect(read == expected, "round \(round): \(bytes)")
        }
        #expect(answered > 500)
    }

    /// Keys are read two words at a time: keys known and unknown, of every length around
    /// the sixteen bytes read at once, with a special byte (quote, escape, control
    /// character, byte outside ASCII, valid or not) at every offset, and keys near the
    /// input's end, read as `JSONDecoder` reads them (an escaped key is left to it).
    @Test func keysAreReadWhereverTheirSpecialBytesFall() throws {
        var generator = SeededGenerator(seed: 2_027)
        let specials: [[UInt8]] = [Array(#"\""#.utf8), Array(#"\\"#.utf8), Array(#"\u0064"#.utf8), Array("é".utf8), [0xC3], [0xFF], [0x01], [0x1F], [0x22]]
        let known = ["id", "name", "avatar", "backgroundImage"]
        var answered = 0
        for round in 0..<4_000 {
            var key = Array((round % 3 == 0 ? known[round % known.count] : String(repeating: "k", count: Int.random(in: 0...20, using: &generator))).utf8)
            if round % 2 == 1 {
                let special = specials[Int.random(in: 0..<specials.count, using: &generator)]
                key.insert(contentsOf: special, at: Int.random(in: 0...key.count, using: &generator))
            }
            var bytes = Array(#"{"data":{"getMomentsDetailsByUserID":{"moments":[],"userDetails":{""#.utf8) + key
                + Array(#"":"1","id":"0","name":"n","avatar":"a","backgroundImage":"b"}}}}"#.utf8)
            if round % 5 == 4 {
                // Cut off inside or just after the key: it runs into the end.
                let keyStart = bytes.count - 64 - key.count
                bytes.removeSubrange(min(bytes.count, keyStart + Int.random(in: 0...key.count + 3, using: &generator))...)
            }
            let body = Data(bytes)
            let read = TimelineFastDecoding.decode(body, field: "getMomentsDetailsByUserID")
            if read != nil { answered += 1 }
            // A duplicate known key is JSONDecoder's to judge: the fast reader leaves it.
            if let read { #expect(read == standard(body), "round \(round): \(bytes)") }
            if read == nil, round % 3 != 0, round % 2 == 0, round % 5 != 4 { Issue.record("a plain unknown key was refused, round \(round): \(bytes)") }
        }
        #expect(answered > 1_000)
    }

    @Test func theOperationsUseTheFastPathAndFallBackForErrors() throws {
        let operation = GetMomentsByUserID(userID: "0")
        let clean = try operation.decodeResponse(HTTPResponse(statusCode: 200, body: Data(SampleAnswers.oddShapes.utf8)), decoder: JSONDecoder())
        #expect(clean.moments.count == 2)

        let bad = SampleAnswers.oddShapes.replacingOccurrences(of: #""type": "URL""#, with: #""type": "VIDEO""#)
        #expect(throws: DecodingError.self) {
            try operation.decodeResponse(HTTPResponse(statusCode: 200, body: Data(bad.utf8)), decoder: JSONDecoder())
        }
    }
}

enum BenchmarkLikeData {
    static let body: Data = {
        let details = SampleTimelines.timeline(user: "0", moments: 6)
        return (try? JSONEncoder().encode(["data": ["getMomentsDetailsByUserID": details]])) ?? Data()
    }()
}

/// A small deterministic generator (SplitMix64), so failures reproduce.

