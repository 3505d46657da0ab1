import Foundation
import MomentsSupport

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

    var meetsTarget: Bool? {
        if let maximum { return sdk <= maximum }
        guard let ratio, let target else { return nil }
        return ratio >= target
    }
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
        let clock = ContinuousClock()
        let start = clock.now
        var units = 0
        repeat {
            units += try await body()
        } while clock.now - start < duration
        return Double(units) / (clock.now - start).seconds
    }

    /// Medians of each side, and the median of the per-round ratios: each round measures
    /// the two back to back, so a ratio within a round is immune to slow drift.
    static func compare(
        sdk: () async throws -> Double,
        baseline: () async throws -> Double
    ) async rethrows -> (sdk: Double, baseline: Double, ratio: Double) {
        var sdkRates: [Double] = []
        var baseRates: [Double] = []
        var ratios: [Double] = []
        for round in 0..<rounds {
            // Alternate which side goes first, so neither always runs on a warmer machine.
            let base: Double, mine: Double
            if round % 2 == 0 {
                base = try await baseline()
                mine = try await sdk()
            } else {
                mine = try await sdk()
                base = try await baseline()
            }
            baseRates.append(base)
            sdkRates.append(mine)
            if base > 0 { ratios.append(mine / base) }
        }
        return (median(sdkRates), median(baseRates), median(ratios))
    }

    static func median(_ values: [Double]) -> Double {
        let sorted = values.sorted()
        guard !sorted.isEmpty else { return 0 }
        return sorted.count % 2 == 1 ? sorted[sorted.count / 2] : (sorted[sorted.count / 2 - 1] + sorted[sorted.count / 2]) / 2
    }

    /// Times one call, in seconds.
    static func time(_ body: () async throws -> Void) async rethrows -> Double {
        let clock = ContinuousClock()
        let start = clock.now
        try await body()
        return (clock.now - start).seconds
    }

    static func row(_ name: String, unit: String, _ pair: (sdk: Double, baseline: Double, ratio: Double), target: Double?, note: String? = nil) -> Row {
        Row(name: name, unit: unit, sdk: pair.sdk, baseline: pair.baseline, ratio: pair.ratio, target: target, note: note)
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
