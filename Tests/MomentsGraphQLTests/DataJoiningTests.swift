import Foundation
@testable import MomentsGraphQL
import Testing

@Suite struct DataJoiningTests {
    /// Every split of a text into two parts, the empty ones included, joins back to the
    /// text with the closing byte after it.
    @Test func segmentsJoinInOrderWithTheClosingByte() {
        let text = Array(#"{"query":"q","variables":{"id":"7"}"#.utf8)
        for split in 0...text.count {
            let joined = Data(joining: Data(text[..<split]), Data(text[split...]), closingWith: UInt8(ascii: "}"))
            #expect(Array(joined) == text + [UInt8(ascii: "}")], "split at \(split)")
        }
        #expect(Array(Data(joining: Data(), Data(), closingWith: 0x7D)) == [0x7D])
    }
}
