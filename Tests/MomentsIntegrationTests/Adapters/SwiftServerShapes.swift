import Foundation
import MomentsSupport
import MomentsObservability

// Local stand-ins for the parts of swift-log, swift-metrics and swift-distributed-tracing
// that the adapters in `SwiftServerAdapters.swift` use, with those packages' names and
// shapes, so the adapter code shown in the documentation compiles and runs here without
// the package depending on them. Each records what it was given, for the tests to read.

// MARK: swift-log

struct Logger: Sendable {
    enum Level: String, Sendable { case trace, debug, info, notice, warning, error, critical }
    enum MetadataValue: Sendable, Equatable { case string(String) }
    typealias Metadata = [String: MetadataValue]
    struct Message: ExpressibleByStringInterpolation, Sendable, Equatable {
        let text: String
        init(stringLiteral value: String) { text = value }
    }
    struct Entry: Sendable { let label: String; let level: Level; let message: Message; let metadata: Metadata }
    static let entries = PThreadMutex<[Entry]>([])

    let label: String
    init(label: String) { self.label = label }

    func log(level: Level, _ message: @autoclosure () -> Message, metadata: @autoclosure () -> Metadata? = nil) {
        let entry = Entry(label: label, level: level, message: message(), metadata: metadata() ?? [:])
        Self.entries.withLock { $0.append(entry) }
    }
}

// MARK: swift-metrics

/// What the stand-in metrics recorded: each metric's last value (gauges), total
/// (counters) or every value (recorders), by label and dimensions.
enum MetricsRecord {
    static let values = PThreadMutex<[String: [Double]]>([:])
    static func key(_ label: String, _ dimensions: [(String, String)]) -> String {
        ([label] + dimensions.map { "\($0.0)=\($0.1)" }).joined(separator: " ")
    }
    static func add(_ label: String, _ dimensions: [(String, String)], _ value: Double, replacing: Bool = false) {
        values.withLock { values in
            let key = key(label, dimensions)
            if replacing { values[key] = [value] } else { values[key, default: []].append(value) }
        }
    }
    static func recorded(_ label: String) -> [Double] {
        values.withLock { $0.filter { $0.key == label || $0.key.hasPrefix(label + " ") }.flatMap(\.value) }
    }
}

final class Counter: Sendable {
    let label: String
    let dimensions: [(String, String)]
    init(label: String, dimensions: [(String, String)] = []) { (self.label, self.dimensions) = (label, dimensions) }
    func increment<DataType: BinaryInteger>(by amount: DataType) { MetricsRecord.add(label, dimensions, Double(amount)) }
}

final class Gauge: Sendable {
    let label: String
    let dimensions: [(String, String)]
    init(label: String, dimensions: [(String, String)] = []) { (self.label, self.dimensions) = (label, dimensions) }
    func record<DataType: BinaryFloatingPoint>(_ value: DataType) { MetricsRecord.add(label, dimensions, Double(value), replacing: true) }
}

final class Recorder: Sendable {
    let label: String
    let dimensions: [(String, String)]
    init(label: String, dimensions: [(String, String)] = [], aggregate: Bool = true) { (self.label, self.dimensions) = (label, dimensions) }
    func record<DataType: BinaryFloatingPoint>(_ value: DataType) { MetricsRecord.add(label, dimensions, Double(value)) }
}

// MARK: swift-distributed-tracing (and swift-service-context)

/// The stand-in's context: the active span's ids, as a W3C propagator keeps them.
struct ServiceContext: Sendable {
    var traceID: String?
    var spanID: String?
    var traceState: String?
    static var topLevel: ServiceContext { ServiceContext() }
}

protocol Extractor: Sendable {
    associatedtype Carrier
    func extract(key: String, from carrier: Carrier) -> String?
}

protocol Injector: Sendable {
    associatedtype Carrier
    func inject(_ value: String, forKey key: String, into carrier: inout Carrier)
}

enum SpanKind: Sendable { case server, client, producer, consumer, `internal` }

enum SpanAttribute: Sendable, Equatable { case string(String), int64(Int64), double(Double), bool(Bool) }

struct SpanAttributes: Sendable {
    private var values: [String: SpanAttribute] = [:]
    subscript(_ name: String) -> SpanAttribute? {
        get { values[name] }
        set { values[name] = newValue }
    }
}

/// A span the stand-in tracer recorded.
final class Span: Sendable {
    struct State: Sendable {
        var attributes = SpanAttributes()
        var errors: [String] = []
        var isEnded = false
    }
    let operationName: String
    let kind: SpanKind
    let context: ServiceContext
    let parentSpanID: String?
    private let state = PThreadMutex(State())

    init(operationName: String, kind: SpanKind, context: ServiceContext, parentSpanID: String?) {
        (self.operationName, self.kind, self.context, self.parentSpanID) = (operationName, kind, context, parentSpanID)
    }
    var attributes: SpanAttributes {
        get { state.withLock { $0.attributes } }
        set { state.withLock { $0.attributes = newValue } }
    }
    var errors: [String] { state.withLock { $0.errors } }
    var isEnded: Bool { state.withLock { $0.isEnded } }
    func recordError(_ error: any Error) { state.withLock { $0.errors.append("\(error)") } }
    func end() { state.withLock { $0.isEnded = true } }
}

/// A tracer that, like OpenTelemetry's, chooses every span's id itself and propagates
/// W3C `traceparent` and `tracestate`.
final class StandInTracer: Sendable {
    private let recorded = PThreadMutex<[Span]>([])
    var spans: [Span] { recorded.withLock { $0 } }

    func startSpan(_ operationName: String, context: @autoclosure () -> ServiceContext, ofKind kind: SpanKind = .internal) -> Span {
        var spanContext = context()
        let parent = spanContext.spanID
        spanContext.traceID = spanContext.traceID ?? Self.hex(bytes: 16)
        spanContext.spanID = Self.hex(bytes: 8)
        let span = Span(operationName: operationName, kind: kind, context: spanContext, parentSpanID: parent)
        recorded.withLock { $0.append(span) }
        return span
    }

    func extract<Carrier, E: Extractor>(_ carrier: Carrier, into context: inout ServiceContext, using extractor: E) where E.Carrier == Carrier {
        guard let header = extractor.extract(key: "traceparent", from: carrier) else { return }
        let parts = header.split(separator: "-").map(String.init)
        guard parts.count == 4 else { return }
        context.traceID = parts[1]
        context.spanID = parts[2]
        context.traceState = extractor.extract(key: "tracestate", from: carrier)
    }

    func inject<Carrier, I: Injector>(_ context: ServiceContext, into carrier: inout Carrier, using injector: I) where I.Carrier == Carrier {
        guard let traceID = context.traceID, let spanID = context.spanID else { return }
        injector.inject("00-\(traceID)-\(spanID)-01", forKey: "traceparent", into: &carrier)
        if let state = context.traceState { injector.inject(state, forKey: "tracestate", into: &carrier) }
    }

    private static func hex(bytes: Int) -> String {
        (0..<bytes).map { _ in String(format: "%02x", UInt8.random(in: 1...255)) }.joined()
    }
}

enum InstrumentationSystem {
    static let standIn = StandInTracer()
    static var tracer: StandInTracer { standIn }
    static var instrument: StandInTracer { standIn }
}
