import Foundation

/// Context switches of every thread of this process so far (Linux: /proc/self/task/*/status),
/// for profiles that must tell thread wake-ups from work.
enum ContextSwitches {
    static func total() -> Int {
        guard let tasks = try? FileManager.default.contentsOfDirectory(atPath: "/proc/self/task") else { return 0 }
        var sum = 0
        for task in tasks {
            guard let status = try? String(contentsOfFile: "/proc/self/task/\(task)/status", encoding: .utf8) else { continue }
            for line in status.split(separator: "\n") where line.hasPrefix("voluntary_ctxt_switches") || line.hasPrefix("nonvoluntary_ctxt_switches") {
                sum += Int(line.split(separator: ":").last?.trimmingCharacters(in: .whitespaces) ?? "") ?? 0
            }
        }
        return sum
    }

    /// `Harness.rate` of `operation` (one unit each) over `duration`, with the context
    /// switches it caused per operation.
    static func rate(for duration: Duration, _ operation: () async -> Void) async -> (rate: Double, switches: Double) {
        let before = total()
        var count = 0
        let rate = await Harness.rate(for: duration) {
            await operation()
            count += 1
            return 1
        }
        return (rate, Double(total() - before) / Double(count))
    }
}
