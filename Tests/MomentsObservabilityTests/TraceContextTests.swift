import Foundation
import Testing
import MomentsObservability

/// W3C Trace Context: which `traceparent` and `tracestate` values are continued.
@Suite struct TraceContextTests {
    static let trace = "4bf92f3577b34da6a3ce929d0e0e4736"
    static let parent = "00f067aa0ba902b7"

    @Test(arguments: [
        ("00-\(trace)-\(parent)-01", true),
        ("00-\(trace)-\(parent)-00", false),
        (" 00-\(trace)-\(parent)-03 ", true),   // surrounding spaces; other flag bits ignored
        ("01-\(trace)-\(parent)-01-future", true),   // a later version may carry more fields
    ])
    func aValidHeaderIsContinued(header: String, sampled: Bool) throws {
        let context = try #require(TraceContext(traceparent: header, tracestate: "vendor=1"))
        #expect(context.traceID == Self.trace && context.spanID == Self.parent)
        #expect(context.isSampled == sampled)
        #expect(context.tracestate == "vendor=1")
        #expect(context.traceparent == "00-\(Self.trace)-\(Self.parent)-\(sampled ? "01" : "00")")
    }

    @Test(arguments: [
        "",
        "00-\(trace)-\(parent)",                                  // no flags
        "00-\(trace)-\(parent)-01-extra",                         // version 00 has exactly four fields
        "ff-\(trace)-\(parent)-01",                               // version ff is invalid
        "zz-\(trace)-\(parent)-01",                               // version not hexadecimal
        "00-\(trace.uppercased())-\(parent)-01",                  // uppercase
        "00-\(String(repeating: "0", count: 32))-\(parent)-01",   // all-zero trace id
        "00-\(trace)-\(String(repeating: "0", count: 16))-01",    // all-zero span id
        "00-\(trace.dropLast())-\(parent)-01",                    // short trace id
        "00-\(trace)-\(parent)x-01",                              // long span id
        "00-\(trace)-\(parent)-0g",                               // flags not hexadecimal
    ])
    func anInvalidHeaderIsIgnored(header: String) {
        #expect(TraceContext(traceparent: header) == nil, "\(header)")
    }

    /// Ids that are not what `traceparent` carries make no context.
    @Test func idsAreCheckedWhenAContextIsMade() {
        #expect(TraceContext(traceID: String(repeating: "z", count: 32), spanID: "b7ad6b7169203331") == nil)
        #expect(TraceContext(traceID: "abc", spanID: "b7ad6b7169203331") == nil)
        #expect(TraceContext(traceID: String(repeating: "0", count: 32), spanID: "b7ad6b7169203331") == nil)
        #expect(TraceContext(traceID: "0af7651916cd43dd8448eb211c80319c", spanID: "0000000000000000") == nil)
        #expect(TraceContext(traceID: "0AF7651916CD43DD8448EB211C80319C", spanID: "B7AD6B7169203331")?.traceparent
                == "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01")
    }

    /// `tracestate` keeps what W3C Trace Context allows, and drops the rest member by
    /// member: never the context, never the request.
    @Test func invalidTracestateMembersAreDroppedNotTheContext() throws {
        let parent = "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01"
        func state(_ raw: String) -> String? { TraceContext(traceparent: parent, tracestate: raw)?.tracestate }
        #expect(state("rojo=00f067aa0ba902b7, congo=t61rcWkgMzE") == "rojo=00f067aa0ba902b7,congo=t61rcWkgMzE")
        #expect(state("Upper=1,ok=2") == "ok=2")
        #expect(state("ok=1,ok=2,other=3") == "ok=1,other=3")
        #expect(state("tenant@vendor=1,café=2,ok=naïve,fine=yes") == "tenant@vendor=1,fine=yes")
        #expect(state("a=1\r\nInjected: yes,b=2") == "b=2")
        #expect(state("a=\u{0}x,b=2") == "b=2")
        #expect(state("long=\(String(repeating: "x", count: 593)),short=1") == "short=1")
        #expect(state("bad") == nil)
        let many = (0..<33).map { "k\($0)=v" }.joined(separator: ",")
        #expect(state(many)?.split(separator: ",").count == 32)
        #expect(state(many)?.hasSuffix("k31=v") == true)
    }

    /// Random IDs are valid headers, never repeat, and every hex digit of them varies:
    /// 10,000 draws would show a digit left constant, or a byte drawn twice.
    @Test func randomIDsAreValidDistinctAndUseEveryDigit() throws {
        var traces = Set<String>(), spans = Set<String>()
        var digitsSeen = [Set<UInt8>](repeating: [], count: 48)
        for _ in 0..<10_000 {
            let context = TraceContext.random()
            #expect(TraceContext(traceparent: context.traceparent) == context)
            #expect(context.traceID.utf8.count == 32 && context.spanID.utf8.count == 16)
            traces.insert(context.traceID)
            spans.insert(context.spanID)
            for (position, digit) in (context.traceID + context.spanID).utf8.enumerated() { digitsSeen[position].insert(digit) }
        }
        #expect(traces.count == 10_000 && spans.count == 10_000)
        #expect(digitsSeen.allSatisfy { $0 == Set("0123456789abcdef".utf8) }, "a digit position did not take every value")
    }

    @Test func aChildKeepsTheTraceUnderANewSpan() throws {
        let context = TraceContext.random()
        #expect(TraceContext(traceparent: context.traceparent) == context, "a random context is a valid header")
        let child = context.child()
        #expect(child.traceID == context.traceID && child.spanID != context.spanID)
    }
}
