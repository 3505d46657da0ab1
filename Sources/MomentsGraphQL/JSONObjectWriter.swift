package import Foundation
import MomentsSupport

/// Writes a flat JSON object member by member, without an encoder: for the variables of
/// an operation sent very often (see ``GraphQLOperation/encodedVariables``).
///
/// For example:
/// ```swift
/// var object = JSONObjectWriter()
/// object.add("userID", userID)
/// object.add("withLikes", true)
/// let bytes = object.finished()   // {"userID":"0","withLikes":true}
/// ```
/// Keys are written as given (they must need no escaping); string values as
/// `JSONString` writes them.
package struct JSONObjectWriter: Sendable {
    private var bytes: [UInt8] = [UInt8(ascii: "{")]

    /// An empty object.
    package init() {
        bytes.reserveCapacity(64)
    }

    /// Adds the member `key` with the string `value`.
    package mutating func add(_ key: StaticString, _ value: String) {
        writeKey(key)
        JSONString.appendQuoted(value, to: &bytes)
    }

    /// Adds the member `key` with the boolean `value`.
    package mutating func add(_ key: StaticString, _ value: Bool) {
        writeKey(key)
        append(value ? "true" : "false")
    }

    /// The object's bytes, closed.
    package func finished() -> Data {
        bytes.withUnsafeBytes { Data(joining: $0, closingWith: UInt8(ascii: "}")) }
    }

    private mutating func writeKey(_ key: StaticString) {
        if bytes.count > 1 { bytes.append(UInt8(ascii: ",")) }
        bytes.append(UInt8(ascii: "\""))
        append(key)
        append("\":")
    }

    /// Appends the bytes of `literal`, with no allocation.
    private mutating func append(_ literal: StaticString) {
        bytes.append(contentsOf: UnsafeBufferPointer(start: literal.utf8Start, count: literal.utf8CodeUnitCount))
    }
}
