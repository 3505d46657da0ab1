/// Where the SDK's figures go: counters, gauges and histograms made by a factory, shaped
/// like swift-metrics' `MetricsFactory`, so an adapter to it is one small file.
/// ``PrometheusRegistry`` is one, for a service with no metrics stack: it renders
/// Prometheus' text format.
///
/// Names follow OpenTelemetry's semantic conventions where they exist
/// (`http.client.request.duration`, in seconds, with `http.request.method`,
/// `server.address`, `http.response.status_code` and `error.type`), and `moments.*`
/// otherwise. The SDK asks the factory for each metric once per set of dimensions and
/// keeps it.
public protocol MomentsMetricsFactory: Sendable {
    /// A counter named `name` with `dimensions` (label, value pairs).
    func makeCounter(_ name: String, dimensions: [(String, String)]) -> any MomentsCounter
    /// A gauge named `name` with `dimensions`.
    func makeGauge(_ name: String, dimensions: [(String, String)]) -> any MomentsGauge
    /// A histogram named `name` with `dimensions`, of values in `unit` (`"s"`, `"By"`).
    func makeHistogram(_ name: String, unit: String, dimensions: [(String, String)]) -> any MomentsHistogram
}

/// A value that only goes up.
public protocol MomentsCounter: Sendable {
    /// Adds `amount`.
    func increment(by amount: Int)
}

/// A value that goes up and down.
public protocol MomentsGauge: Sendable {
    /// Sets the value.
    func set(_ value: Double)
}

/// A distribution of values.
public protocol MomentsHistogram: Sendable {
    /// Records one value.
    func record(_ value: Double)
}
