import Foundation
import MomentsNetworking
import MomentsTestSupport
import Testing
import MomentsGraphQL

/// `JSONObjectWriter` writes what a JSON reader reads back as the values it was given.
@Suite struct JSONObjectWriterTests {
    @Test func membersReadBackAsWritten() throws {
        var object = JSONObjectWriter()
        object.add("id", "a\"b\\c\n\u{01}/é🌃")
        object.add("on", true)
        object.add("off", false)
        let bytes = object.finished()
        let read = try #require(try JSONSerialization.jsonObject(with: bytes) as? [String: Any])
        #expect(read["id"] as? String == "a\"b\\c\n\u{01}/é🌃")
        #expect(read["on"] as? Bool == true)
        #expect(read["off"] as? Bool == false)
        #expect(String(decoding: JSONObjectWriter().finished(), as: UTF8.self) == "{}")
    }

    @Test func randomTextReadsBackAsItself() throws {
        var generator = SeededGenerator(seed: 5)
        let alphabet: [Character] = ["a", " ", "/", "\\", "\"", "\n", "\r", "\t", "\u{00}", "\u{08}", "\u{0C}", "\u{1F}", "\u{7F}", "é", "東", "🌃"]
        for round in 0..<2_000 {
            let text = String((0..<Int.random(in: 0...20, using: &generator)).map { _ in alphabet.randomElement(using: &generator)! })
            var object = JSONObjectWriter()
            object.add("text", text)
            let decoded = try JSONDecoder().decode([String: String].self, from: object.finished())
            #expect(decoded == ["text": text], "round \(round)")
        }
    }
}
