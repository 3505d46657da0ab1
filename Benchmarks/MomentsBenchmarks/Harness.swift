import Foundation
import MomentsSupport
import Synchronization

/// One line of the report: the SDK's figure beside the baseline's, measured in the same run.
struct Row: Codable {
    var name: String
    var unit: String
    var sdk: Double
    var baseline: Double?
    /// sdk / baseline for throughputs (higher is better).
    var ratio: Double?
    var target: Double?
    var note: String?
    /// For a figure where lower is better (a latency, a count): the most it may be.
    var maximum: Double?
    /// CPU time the whole process spent per unit of the SDK's rate (per request for
    /// req/s, per row for rows/s, per MB for MB/s), in µs: every thread, the SDK's own
    /// and the transport's; not a server's in another process.
    var sdkCPU: Double?
    /// The same for the baseline.
    var baselineCPU: Double?

    var meetsTarget: Bool? {
        if let maximum { return sdk <= maximum }
        guard let ratio, let target else { return nil }
        return ratio >= target
    }
}

/// The SDK's and the baseline's medians, the median of the per-round ratios, and the
/// median CPU per unit of each side (see ``Row/sdkCPU``), from one ``Harness/compare``.
struct Comparison {
    let sdk: Double
    let baseline: Double
    let ratio: Double
    let sdkCPU: Double?
    let baselineCPU: Double?
}

/// Measures by interleaving baseline and SDK rounds and taking each one's median, so
/// drift on a noisy machine hits both alike.
enum Harness {
    /// `--quick` trades precision for time.
    static let isQuick = CommandLine.arguments.contains("--quick")
    static let rounds = isQuick ? 3 : 7
    static let roundDuration: Duration = isQuick ? .milliseconds(150) : .milliseconds(400)

    /// Runs `body` repeatedly for about `duration`; returns units per second, where
    /// `body` returns the units it processed.
    static func rate(for duration: Duration, _ body: () async throws -> Int) async rethrows -> Double {
        let (units, seconds) = try await window { start in
            var units = 0
            repeat {
                units += try await body()
            } while ContinuousClock.now - start < duration
            return units
        }
        return Double(units) / seconds
    }

    /// Runs `body` (given the instant it starts) as a measured window: returns its result
    /// and duration in seconds, and records the duration and the CPU time it took for
    /// ``compare(sdk:baseline:)`` (see `Window`).
    static func window<T>(_ body: (ContinuousClock.Instant) async throws -> T) async rethrows -> (T, seconds: Double) {
        let start = ContinuousClock.now
        let cpuAtStart = processCPUSeconds()
        let result = try await body(start)
        let seconds = (ContinuousClock.now - start).seconds
        lastWindow.withLock { $0 = Window(seconds: seconds, cpuSeconds: processCPUSeconds() - cpuAtStart) }
        return (result, seconds)
    }

    /// CPU time used by every thread of this process so far, in seconds.
    static func processCPUSeconds() -> Double {
        var now = timespec()
        guard clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &now) == 0 else { return 0 }
        return Double(now.tv_sec) + Double(now.tv_nsec) / 1e9
    }

    /// The duration and CPU time of the last measured window (``window(_:)``, which
    /// ``rate(for:_:)``, ``time(_:)`` and `HTTPBenchmark.concurrently` measure in): a side's rate times
    /// its window's duration is the units it did then, in the unit it reports (a side
    /// that scales its rate, to MB/s say, scales them alike).
    private struct Window {
        let seconds: Double
        let cpuSeconds: Double
    }

    private static let lastWindow = Mutex<Window?>(nil)

    /// Runs one side of a round: its rate, and its CPU per unit of that rate, in µs. The
    /// CPU is that of the window the side measured, if it measured one, so its setup is
    /// left out; otherwise that of the whole call (a baseline timed inside C, say).
    private static func measure(_ side: () async throws -> Double) async rethrows -> (rate: Double, cpu: Double?) {
        lastWindow.withLock { $0 = nil }
        let clock = ContinuousClock()
        let start = clock.now
        let cpuAtStart = processCPUSeconds()
        let rate = try await side()
        let window = lastWindow.withLock { $0 }
            ?? Window(seconds: (clock.now - start).seconds, cpuSeconds: processCPUSeconds() - cpuAtStart)
        let units = rate * window.seconds
        return (rate, units > 0 ? window.cpuSeconds / units * 1e6 : nil)
    }

    /// Medians of each side, and the median of the per-round ratios: each round measures
    /// the two back to back, so a ratio within a round is immune to slow drift. Each
    /// side's CPU per unit is the median of its rounds'.
    static func compare(
        sdk: () async throws -> Double,
        baseline: () async throws -> Double
    ) async rethrows -> Comparison {
        var sdkRates: [Double] = []
        var baseRates: [Double] = []
        var ratios: [Double] = []
        var sdkCPU: [Double] = []
        var baseCPU: [Double] = []
        for round in 0..<rounds {
            // Alternate which side goes first, so neither always runs on a warmer machine.
            let base: (rate: Double, cpu: Double?), mine: (rate: Double, cpu: Double?)
            if round % 2 == 0 {
                base = try await measure(baseline)
                mine = try await measure(sdk)
            } else {
                mine = try await measure(sdk)
                base = try await measure(baseline)
            }
            baseRates.append(base.rate)
            sdkRates.append(mine.rate)
            if let cpu = base.cpu { baseCPU.append(cpu) }
            if let cpu = mine.cpu { sdkCPU.append(cpu) }
            if base.rate > 0 { ratios.append(mine.rate / base.rate) }
        }
        return Comparison(sdk: median(sdkRates), baseline: median(baseRates), ratio: median(ratios),
                          sdkCPU: sdkCPU.isEmpty ? nil : median(sdkCPU), baselineCPU: baseCPU.isEmpty ? nil : median(baseCPU))
    }

    static func median(_ values: [Double]) -> Double {
        let sorted = values.sorted()
        guard !sorted.isEmpty else { return 0 }
        return sorted.count % 2 == 1 ? sorted[sorted.count / 2] : (sorted[sorted.count / 2 - 1] + sorted[sorted.count / 2]) / 2
    }

    /// Times one call, in seconds (its CPU time recorded as the measured window: a side
    /// that divides its work by these seconds reports a rate over exactly this call).
    static func time(_ body: () async throws -> Void) async rethrows -> Double {
        try await window { _ in try await body() }.seconds
    }

    static func row(_ name: String, unit: String, _ pair: (sdk: Double, baseline: Double, ratio: Double), target: Double?, note: String? = nil) -> Row {
        Row(name: name, unit: unit, sdk: pair.sdk, baseline: pair.baseline, ratio: pair.ratio, target: target, note: note)
    }

    /// A row of a comparison, with each side's CPU per unit.
    static func row(_ name: String, unit: String, _ comparison: Comparison, target: Double?, note: String? = nil) -> Row {
        Row(name: name, unit: unit, sdk: comparison.sdk, baseline: comparison.baseline, ratio: comparison.ratio, target: target, note: note,
            sdkCPU: comparison.sdkCPU, baselineCPU: comparison.baselineCPU)
    }
}

/// The process's peak resident set size (VmHWM), in bytes.
func peakResidentBytes() -> Int {
    guard let status = try? String(contentsOfFile: "/proc/self/status", encoding: .utf8),
          let line = status.split(separator: "\n").first(where: { $0.hasPrefix("VmHWM:") }),
          let kilobytes = Int(line.split(separator: " ").dropFirst().first ?? "") else { return 0 }
    return kilobytes * 1024
}

func currentResidentBytes() -> Int {
    guard let status = try? String(contentsOfFile: "/proc/self/status", encoding: .utf8),
          let line = status.split(separator: "\n").first(where: { $0.hasPrefix("VmRSS:") }),
          let kilobytes = Int(line.split(separator: " ").dropFirst().first ?? "") else { return 0 }
    return kilobytes * 1024
}
