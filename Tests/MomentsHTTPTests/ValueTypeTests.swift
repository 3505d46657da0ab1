import Foundation
import MomentsNetworking
import Testing
import MomentsHTTP

@Suite struct HTTPHeadersTests {
    @Test func namesCompareCaseInsensitively() {
        var headers: HTTPHeaders = ["Content-Type": "text/plain"]
        headers["content-type"] = "application/json"
        headers.add(name: "Accept", value: "a")
        headers.add(name: "ACCEPT", value: "b")

        #expect(headers["CONTENT-TYPE"] == "application/json")
        #expect(headers.count == 3)
        headers["accept"] = "c"
        #expect(headers.filter { $0.name.lowercased() == "accept" }.map(\.value) == ["c"])
        headers["Accept"] = nil
        #expect(!headers.contains("accept"))
    }

    @Test func mergingLetsTheOtherSideWin() {
        let defaults: HTTPHeaders = ["Accept": "json", "User-Agent": "m"]
        let merged = defaults.merging(["accept": "xml"])

        #expect(merged["Accept"] == "xml")
        #expect(merged["user-agent"] == "m")
        #expect(merged.count == 2)
    }

    @Test func credentialsAreRedactedFromTheDescription() {
        let headers: HTTPHeaders = [
            "Authorization": "Bearer abc", "X-Api-Auth-Token": "def", "Cookie": "ghi", "Accept": "json",
        ]

        let text = headers.description
        #expect(!text.contains("abc") && !text.contains("def") && !text.contains("ghi"))
        #expect(text.contains("Accept: json"))
    }
}

@Suite struct PathSegmentTests {
    @Test(arguments: [
        ("simple", "simple"),
        ("a/b", "a%2Fb"),
        ("../admin?x=1", "..%2Fadmin%3Fx=1"),
        ("..", "%2E%2E"),
        (".", "%2E"),
        ("x#y", "x%23y"),
        ("100%", "100%25"),
        ("é 🙂", "%C3%A9%20%F0%9F%99%82"),
        ("", ""),
    ])
    func encodesOneSegment(value: String, expected: String) {
        #expect(PathSegment.encode(value) == expected)
        #expect("/u/\(segment: value)" == "/u/" + expected)
    }
}

@Suite struct HTTPMethodTests {
    @Test func onlySafeAndIdempotentMethodsAreIdempotent() {
        #expect(HTTPMethod.allCases.filter(\.isIdempotent) == [.get, .put, .delete, .head])
    }
}

/// `HTTPClientError` keeps its fields in one shared box: it must still behave as a value.
@Suite struct HTTPClientErrorValueTests {
    @Test func aChangedCopyLeavesTheOriginalAsItWas() throws {
        let response = HTTPResponse(statusCode: 503, headers: ["Retry-After": "3"], body: Data("busy".utf8))
        let original = HTTPClientError.serverError(response)
        var copy = original
        copy.retriesStopped = .deadline
        copy.retryAfter = .seconds(3)
        #expect(original.retriesStopped == nil)
        #expect(original.retryAfter == nil)
        #expect(copy.retriesStopped == .deadline)
        #expect(copy.retryAfter == .seconds(3))
        // What was not changed is the same in both.
        for error in [original, copy] {
            #expect(error.code == .serverError)
            #expect(error.statusCode == 503)
            #expect(error.response?.body == Data("busy".utf8))
            #expect(error.reason == original.reason)
        }
    }

    @Test func aTransportFailureKeepsWhatItWasMadeWith() {
        struct Cause: Error {}
        let error = HTTPClientError.transportFailure(TransportFailure(kind: .timedOut, message: "slow"), underlyingError: Cause())
        #expect(error.code == .transportFailure)
        #expect(error.transportFailure?.kind == .timedOut)
        #expect(error.underlyingError is Cause)
        #expect(error.response == nil && error.method == nil && error.url == nil)
        #expect(error.description.contains("slow"))
    }
}
