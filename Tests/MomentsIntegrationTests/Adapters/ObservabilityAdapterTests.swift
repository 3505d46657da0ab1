import Foundation
import Moments
import MomentsNetworking
import MomentsSupport
import MomentsTestSupport
import Testing
import MomentsObservability

/// The adapters to swift-log, swift-metrics and swift-distributed-tracing that the
/// documentation shows: the article's code is the code compiled here, and it carries the
/// SDK's logs, figures and spans into those tools, with the server seeing the span the
/// tracer recorded.
@Suite(.serialized) struct ObservabilityAdapterTests {
    /// The article, next to the MomentsObservability sources.
    static let article = ArticleCode.root.appendingPathComponent("Sources/MomentsObservability/MomentsObservability.docc/WiringObservability.md")
    static let adapters = URL(fileURLWithPath: #filePath).deletingLastPathComponent().appendingPathComponent("SwiftServerAdapters.swift")

    @Test func everyCodeBlockOfTheArticleIsCompiledHere() throws {
        let (missing, count) = try ArticleCode.blocksMissing(from: Self.adapters, article: Self.article)
        #expect(count >= 4, "the article shows the log, metrics, tracing and setup code")
        #expect(missing.isEmpty, "not in SwiftServerAdapters.swift:\n\(missing.joined(separator: "\n---\n"))")
    }

    @Test func theAdaptersCarryTheSDKsWorkToTheTools() async throws {
        let bff = try await ReferenceBFF()
        defer { bff.stop() }
        let logger = Logger(label: "moments.\(UUID().uuidString)")
        let store = makeObservedStore(baseURL: bff.baseURL, logger: logger)
        // The span of the incoming request that the user's server framework started.
        let incoming = InstrumentationSystem.tracer.startSpan("GET /timeline", context: .topLevel, ofKind: .server)

        _ = try await timeline(of: "0", in: store, serving: incoming.context)

        let spans = InstrumentationSystem.tracer.spans.filter { $0.context.traceID == incoming.context.traceID && $0 !== incoming }
        let byName = Dictionary(spans.map { ($0.operationName, $0) }, uniquingKeysWith: { first, _ in first })
        let refresh = try #require(byName["moments.store.refresh"])
        let service = try #require(byName["moments.service.get_moments"])
        let attempt = try #require(byName["HTTP POST"])
        #expect(refresh.parentSpanID == incoming.context.spanID)
        #expect(service.parentSpanID == refresh.context.spanID)
        #expect(attempt.parentSpanID == service.context.spanID)
        #expect(attempt.kind == .client)
        #expect(attempt.attributes["http.response.status_code"] == .int64(200))
        #expect(spans.allSatisfy { $0.isEnded })
        let sent = try #require(TraceContext(traceparent: try await ObservabilityTests.stats(bff).lastTraceparent))
        #expect(sent.traceID == incoming.context.traceID)
        #expect(sent.spanID == attempt.context.spanID, "the server sees the span the tracer chose and recorded")

        let durations = MetricsRecord.recorded("http.client.request.duration")
        #expect(!durations.isEmpty && durations.allSatisfy { $0 > 0 })
        #expect(MetricsRecord.recorded("moments.store.timelines").last == 1)

        let traceID = try #require(incoming.context.traceID)
        let records = Logger.entries.withLock { $0.filter { $0.label == logger.label } }
        #expect(records.contains { $0.level == .info && $0.metadata["trace_id"] == .string(traceID) })
    }
}
