import Foundation
import Moments
import MomentsGraphQL
import MomentsHTTP
import MomentsTestSupport
import Testing
import MomentsBFF

/// An answer that is not JSON is refused, whether the fast reader or `JSONDecoder` reads
/// it, and wherever the fault is: in a field the models decode, or in one they skip.
@Suite struct StrictJSONTests {
    /// Texts that are not JSON values (RFC 8259), each a kind of fault a lenient reader takes.
    static let invalid: [String] = [
        // Numbers.
        "++1", "+1", ".2e-3", "-01", "01", "1.0e", "2.", "1.e1", "-", "1e", "1e+", "0x1", "1.5.2", "1-2", "Infinity", "NaN", "-.5", "1ee2",
        // Arrays and objects.
        "[1,]", "[,1]", "[1,,2]", "[1 2]", #"{"a":1,}"#, #"{"a" 1}"#, #"{"a":1 "b":2}"#, #"{a:1}"#, #"{"a":}"#, "[1", #"{"a":1"#, "]", "[1]]",
        // Strings.
        "\"a\u{01}b\"", "\"tab\there\"", #""\x41""#, #""\u12""#, #""\u12G4""#, #""\a""#, "\"unclosed", #""'single'\'""#,
        // Literals.
        "tru", "nul", "True", "NULL",
    ]

    /// JSON values a strict reader must accept.
    static let valid: [String] = [
        "0", "-0", "0.5", "-12.5e+3", "1E-2", "1e999999", "12345678901234567890123", "[]", "{}", "[[[]]]",
        #"{"a":[1,{"b":null}],"c":"\u00e9\/\\\"\b\f\n\r\t"}"#, #""\ud83c\udf03""#, "true", "false", "null",
        #"{"dup":1,"dup":2}"#, " [ 1 , 2 ] ",
    ]

    private let operation = GetMomentsByUserID(userID: "0")

    /// The fixture's answer with `value` as an unknown field of its first moment.
    private func answer(with value: String) -> Data {
        Data(SampleAnswers.oddShapes.replacingOccurrences(of: #"{"id": "a", "#, with: #"{"extra": \#(value), "id": "a", "#).utf8)
    }

    private func decode(_ body: Data) throws -> MomentsDetails {
        try operation.decodeResponse(HTTPResponse(statusCode: 200, body: body), decoder: JSONDecoder())
    }

    @Test(arguments: invalid)
    func anInvalidValueInASkippedFieldIsRefused(_ value: String) throws {
        #expect(StrictJSON.violation(in: Data(value.utf8)) != nil, "the checker refuses \(value) alone")
        let error = #expect(throws: DecodingError.self, "the answer with \(value) was taken") { try decode(answer(with: value)) }
        if case .dataCorrupted(let context) = error {
            #expect(context.debugDescription.contains("not valid JSON"), "\(context.debugDescription)")
        } else {
            Issue.record("\(String(describing: error))")
        }
    }

    @Test(arguments: valid)
    func aValidValueInASkippedFieldIsSkipped(_ value: String) throws {
        #expect(StrictJSON.violation(in: Data(value.utf8)) == nil, "the checker accepts \(value)")
        let clean = try decode(Data(SampleAnswers.oddShapes.utf8))
        #expect(try decode(answer(with: value)) == clean)
    }

    @Test func faultsInDecodedFieldsAreRefusedToo() throws {
        let trailingComma = SampleAnswers.oddShapes.replacingOccurrences(of: #""https://img/p2.jpg"]"#, with: #""https://img/p2.jpg",]"#)
        #expect(trailingComma != SampleAnswers.oddShapes)
        #expect(throws: DecodingError.self) { try decode(Data(trailingComma.utf8)) }
        let badEscape = SampleAnswers.oddShapes.replacingOccurrences(of: #""name": "Jake""#, with: #""name": "J\qake""#)
        #expect(throws: DecodingError.self) { try decode(Data(badEscape.utf8)) }
        let trailingText = SampleAnswers.oddShapes + " x"
        #expect(throws: DecodingError.self) { try decode(Data(trailingText.utf8)) }
        #expect(StrictJSON.violation(in: Data([0x22, 0xC3, 0x28, 0x22])) != nil, "invalid UTF-8")
    }

    @Test func deepNestingIsCheckedWithoutRecursion() {
        let deep = String(repeating: "[", count: 100_000) + String(repeating: "]", count: 100_000)
        #expect(StrictJSON.violation(in: Data(deep.utf8)) == nil)
        #expect(StrictJSON.violation(in: Data((deep + "]").utf8)) != nil)
    }
}
