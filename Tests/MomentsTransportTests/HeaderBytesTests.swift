@testable import MomentsCurl
import MomentsTestSupport
import Testing

@Suite struct HeaderBytesTests {
    private func withBytes<T>(_ text: String, _ body: (Slice<UnsafeRawBufferPointer>) -> T) -> T {
        Array(text.utf8).withUnsafeBytes { body($0[...]) }
    }

    @Test(arguments: [("Content-Length", true), ("content-length", true), ("CONTENT-LENGTH", true), ("Content-Lengths", false),
                      ("Content-Lengt", false), ("Content_Length", false), ("", false)])
    func namesMatchIgnoringCaseOnly(name: String, matches: Bool) {
        #expect(withBytes(name) { HeaderBytes.equalsIgnoringCase($0, "content-length") } == matches)
    }

    /// Over random strings of digits, signs and other bytes, the byte reader agrees with
    /// `Int64(String)` on every string without a minus sign, and refuses every one with.
    @Test func decimalsAgreeWithInt64ParsingOfNonNegativeNumbers() {
        var random = SeededGenerator(seed: 0xC0_17E)
        let alphabet = Array("0123456789+- a9")
        var samples = ["9223372036854775807", "9223372036854775808", "+0", "+", "", "-1", "00012", "99999999999999999999"]
        for _ in 0..<5_000 {
            samples.append(String((0..<Int(random.next() % 22)).map { _ in alphabet[Int(random.next() % UInt64(alphabet.count))] }))
        }
        for sample in samples {
            let expected = sample.hasPrefix("-") ? nil : Int64(sample)
            #expect(withBytes(sample) { HeaderBytes.decimal($0) } == expected, "\(sample.debugDescription)")
        }
    }
}
