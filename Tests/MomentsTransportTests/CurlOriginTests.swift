import Foundation
@testable import MomentsCurl
import MomentsTestSupport
import Testing

/// The origin a transfer is counted under, for the per-origin connection limit:
/// `scheme://authority`, lowercased, read off the URL's text.
@Suite struct CurlOriginTests {
    /// The rule stated on characters: the text up to the first `/`, `?` or `#` after the
    /// first `://`, lowercased; the whole text, as it is, without a `://`.
    private func expectedOrigin(of url: URL) -> String {
        let text = url.absoluteString
        guard let schemeEnd = text.range(of: "://") else { return text }
        let authorityEnd = text[schemeEnd.upperBound...].firstIndex { $0 == "/" || $0 == "?" || $0 == "#" } ?? text.endIndex
        return String(text[..<authorityEnd]).lowercased()
    }

    @Test(arguments: [
        ("http://127.0.0.1:8080/graphql", "http://127.0.0.1:8080"),
        ("HTTPS://API.Example.COM/Moments?x=1", "https://api.example.com"),
        ("http://example.com", "http://example.com"),
        ("http://example.com?q=/a", "http://example.com"),
        ("http://example.com#frag/ment", "http://example.com"),
        ("http://user:pass@Host:81/p", "http://user:pass@host:81"),
        ("http://[::1]:8080/x", "http://[::1]:8080"),
    ])
    func originIsSchemeAndAuthorityLowercased(_ text: String, _ origin: String) throws {
        let url = try #require(URL(string: text))
        #expect(CurlTransfer.origin(of: url) == origin)
    }

    /// Random texts over an alphabet rich in the characters the rule looks at (and
    /// letters outside ASCII): each URL that parses gets the origin the rule gives.
    @Test func originFollowsTheRuleForRandomURLs() throws {
        let seed = UInt64.random(in: 0...UInt64.max)
        var generator = SeededGenerator(seed: seed)
        let alphabet = Array("aZ09:/?#.@[]-_%é".unicodeScalars)
        let prefixes = ["http://", "HTTPS://", "Ftp://", "", "x:", "a://b"]
        var parsed = 0
        for _ in 0..<5_000 {
            var text = prefixes.randomElement(using: &generator) ?? ""
            for _ in 0..<Int.random(in: 0...24, using: &generator) {
                text.unicodeScalars.append(alphabet.randomElement(using: &generator) ?? "a")
            }
            guard let url = URL(string: text) else { continue }
            parsed += 1
            #expect(CurlTransfer.origin(of: url) == expectedOrigin(of: url), "seed \(seed): \(url.absoluteString)")
        }
        #expect(parsed > 500, "seed \(seed): too few texts parsed as URLs to test the rule")
    }
}
