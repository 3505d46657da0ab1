import Foundation
import MomentsSupport

/// A ``MomentsMetricsFactory`` that keeps every figure in memory and renders it in
/// Prometheus' text exposition format, for a service with no metrics stack.
///
/// For example:
/// ```swift
/// let metrics = PrometheusRegistry()
/// let client = HTTPClient(baseURL: bff) { $0.metrics = metrics }
/// let store = MomentsStore(service: GraphQLMomentsService(client: client), persistence: persistence, configuration: .init { $0.metrics = metrics })
/// // Serve `metrics.render()` at GET /metrics.
/// ```
///
/// Names have their dots made underscores, and a histogram's unit is appended
/// (`http.client.request.duration` in seconds is `http_client_request_duration_seconds`).
public final class PrometheusRegistry: MomentsMetricsFactory, Sendable {
    private enum Kind: String { case counter, gauge, histogram }

    private final class Series: Sendable {
        let values = PThreadMutex<(sum: Double, count: Int, buckets: [Int])>((0, 0, []))
    }

    private struct Key: Hashable {
        let name: String
        let labels: String
    }

    private let series = PThreadMutex<[Key: (kind: Kind, series: Series)]>([:])
    /// The histograms' upper bounds, by unit: seconds, and bytes; anything else counts.
    private static let bounds: [String: [Double]] = [
        "s": [0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10],
        "By": [64, 256, 1_024, 4_096, 16_384, 65_536, 262_144, 1_048_576, 4_194_304, 16_777_216],
    ]
    private static let defaultBounds: [Double] = [1, 2, 5, 10, 25, 50, 100, 250, 500, 1_000]

    /// An empty registry.
    public init() {}

    public func makeCounter(_ name: String, dimensions: [(String, String)]) -> any MomentsCounter {
        Counter(series: register(name, .counter, dimensions))
    }

    public func makeGauge(_ name: String, dimensions: [(String, String)]) -> any MomentsGauge {
        Gauge(series: register(name, .gauge, dimensions))
    }

    public func makeHistogram(_ name: String, unit: String, dimensions: [(String, String)]) -> any MomentsHistogram {
        let suffix = switch unit { case "s": "_seconds"; case "By": "_bytes"; default: "" }
        let bounds = Self.bounds[unit] ?? Self.defaultBounds
        return Histogram(series: register(name + suffix, .histogram, dimensions, buckets: bounds.count), bounds: bounds)
    }

    /// Every figure, in Prometheus' text exposition format (version 0.0.4).
    public func render() -> String {
        let all = series.withLock { $0 }
        var lines: [String] = []
        var typed = Set<String>()
        for (key, entry) in all.sorted(by: { ($0.key.name, $0.key.labels) < ($1.key.name, $1.key.labels) }) {
            let name = key.name
            if typed.insert(name).inserted { lines.append("# TYPE \(name) \(entry.kind.rawValue)") }
            let values = entry.series.values.withLock { $0 }
            switch entry.kind {
            case .counter, .gauge:
                lines.append("\(name)\(Self.braces(key.labels)) \(Self.number(values.sum))")
            case .histogram:
                let bounds = Self.bounds(forHistogram: name)
                var cumulative = 0
                for (index, bound) in bounds.enumerated() {
                    cumulative += index < values.buckets.count ? values.buckets[index] : 0
                    lines.append("\(name)_bucket\(Self.braces(Self.join(key.labels, "le=\"\(Self.number(bound))\""))) \(cumulative)")
                }
                lines.append("\(name)_bucket\(Self.braces(Self.join(key.labels, "le=\"+Inf\""))) \(values.count)")
                lines.append("\(name)_sum\(Self.braces(key.labels)) \(Self.number(values.sum))")
                lines.append("\(name)_count\(Self.braces(key.labels)) \(values.count)")
            }
        }
        return lines.joined(separator: "\n") + "\n"
    }

    /// A figure's value, for tests: a counter's or gauge's value, a histogram's count.
    public func value(of name: String, _ dimensions: [(String, String)] = []) -> Double? {
        let key = Key(name: Self.metricName(name), labels: Self.labels(dimensions))
        return series.withLock { all in
            all[key].map { entry in entry.series.values.withLock { entry.kind == .histogram ? Double($0.count) : $0.sum } }
        }
    }

    // MARK: - Series

    private func register(_ name: String, _ kind: Kind, _ dimensions: [(String, String)], buckets: Int = 0) -> Series {
        let key = Key(name: Self.metricName(name), labels: Self.labels(dimensions))
        return series.withLock { all in
            if let existing = all[key] { return existing.series }
            let created = Series()
            created.values.withLock { $0.buckets = Array(repeating: 0, count: buckets) }
            all[key] = (kind, created)
            return created
        }
    }

    private static func bounds(forHistogram name: String) -> [Double] {
        if name.hasSuffix("_seconds") { return bounds["s"] ?? defaultBounds }
        if name.hasSuffix("_bytes") { return bounds["By"] ?? defaultBounds }
        return defaultBounds
    }

    static func metricName(_ name: String) -> String {
        String(name.map { $0.isLetter || $0.isNumber || $0 == "_" || $0 == ":" ? $0 : "_" })
    }

    private static func labels(_ dimensions: [(String, String)]) -> String {
        dimensions.sorted { $0.0 < $1.0 }.map { "\(metricName($0.0))=\"\(escape($0.1))\"" }.joined(separator: ",")
    }

    private static func escape(_ value: String) -> String {
        value.replacingOccurrences(of: "\\", with: "\\\\").replacingOccurrences(of: "\"", with: "\\\"").replacingOccurrences(of: "\n", with: "\\n")
    }

    private static func braces(_ labels: String) -> String { labels.isEmpty ? "" : "{\(labels)}" }

    private static func join(_ labels: String, _ extra: String) -> String { labels.isEmpty ? extra : labels + "," + extra }

    private static func number(_ value: Double) -> String {
        value == value.rounded() && abs(value) < 1e15 ? String(Int(value)) : String(value)
    }

    private struct Counter: MomentsCounter {
        let series: Series
        func increment(by amount: Int) { series.values.withLock { $0.sum += Double(amount) } }
    }

    private struct Gauge: MomentsGauge {
        let series: Series
        func set(_ value: Double) { series.values.withLock { $0.sum = value } }
    }

    private struct Histogram: MomentsHistogram {
        let series: Series
        let bounds: [Double]
        func record(_ value: Double) {
            let index = bounds.firstIndex { value <= $0 }
            series.values.withLock { values in
                values.sum += value
                values.count += 1
                if let index { values.buckets[index] += 1 }
            }
        }
    }
}
