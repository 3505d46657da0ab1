public import Foundation

/// A DocC article's Swift code blocks, and whether a source file compiled here holds each
/// of them: so what the documentation shows is code the tests build and run.
public enum ArticleCode {
    /// The repository's root, from this file's path.
    public static let root = URL(fileURLWithPath: #filePath)
        .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()

    /// The Swift code blocks of `article` that `source` does not hold (whitespace and
    /// blank lines aside), and how many blocks there are.
    public static func blocksMissing(from source: URL, article: URL) throws -> (missing: [String], count: Int) {
        let text = try String(contentsOf: article, encoding: .utf8)
        let compiled = normalized(try String(contentsOf: source, encoding: .utf8))
        let blocks = text.components(separatedBy: "```swift\n").dropFirst().compactMap { $0.components(separatedBy: "```").first }
        return (blocks.filter { !compiled.contains(normalized($0)) }, blocks.count)
    }

    public static func normalized(_ code: String) -> String {
        code.split(whereSeparator: \.isNewline).map { $0.trimmingCharacters(in: .whitespaces) }.filter { !$0.isEmpty }.joined(separator: "\n")
    }
}
