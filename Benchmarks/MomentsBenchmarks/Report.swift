import Foundation

enum Report {
    static func printHeader() {
        print("Moments benchmarks — \(machine()) — \(ISO8601DateFormatter().string(from: Date()))")
        print("")
        print(pad("case", 58) + pad("SDK", 14, right: true) + pad("baseline", 14, right: true) + pad("ratio", 8, right: true) + pad("target", 8, right: true)
              + pad("CPU µs/unit", 18, right: true) + "  unit / note")
        print(String(repeating: "─", count: 148))
    }

    static func printRows(_ rows: [Row]) {
        for row in rows {
            let verdict = row.meetsTarget.map { $0 ? " ✓" : " ✗" } ?? ""
            print(pad(row.name, 58) + pad(format(row.sdk), 14, right: true) + pad(row.baseline.map(format) ?? "—", 14, right: true)
                  + pad(row.ratio.map { String(format: "%.2f", $0) } ?? "—", 8, right: true)
                  + pad(row.maximum.map { String(format: "≤%.2f", $0) } ?? row.target.map { String(format: "≥%.2f", $0) } ?? "", 8, right: true)
                  + pad(cpu(row), 18, right: true)
                  + "  \(row.unit)\(verdict)" + (row.note.map { " — \($0)" } ?? ""))
        }
    }

    /// Each side's CPU per unit of its rate, SDK first: "71.2 / 20.1".
    private static func cpu(_ row: Row) -> String {
        guard row.sdkCPU != nil || row.baselineCPU != nil else { return "" }
        return "\(row.sdkCPU.map(microseconds) ?? "—") / \(row.baselineCPU.map(microseconds) ?? "—")"
    }

    private static func microseconds(_ value: Double) -> String {
        value >= 100 ? String(format: "%.0f", value) : value >= 10 ? String(format: "%.1f", value) : String(format: "%.2f", value)
    }

    static func printFooter(_ rows: [Row]) {
        let judged = rows.filter { $0.meetsTarget != nil }
        print(String(repeating: "─", count: 148))
        print("\(judged.filter { $0.meetsTarget == true }.count) of \(judged.count) targets met")
    }

    static func printJSON(_ rows: [Row]) {
        struct Document: Encodable {
            let machine: String
            let date: String
            let rows: [Row]
        }
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.prettyPrinted, .sortedKeys]
        let document = Document(machine: machine(), date: ISO8601DateFormatter().string(from: Date()), rows: rows)
        if let data = try? encoder.encode(document) { print(String(decoding: data, as: UTF8.self)) }
    }

    static func machine() -> String {
        let cpu = (try? String(contentsOfFile: "/proc/cpuinfo", encoding: .utf8))?
            .split(separator: "\n").first { $0.hasPrefix("model name") }?
            .split(separator: ":").last?.trimmingCharacters(in: .whitespaces) ?? "unknown CPU"
        return "\(ProcessInfo.processInfo.activeProcessorCount) cores, \(cpu), \(ProcessInfo.processInfo.physicalMemory >> 30) GiB"
    }

    private static func format(_ value: Double) -> String {
        switch value {
        case 1_000_000...: String(format: "%.2fM", value / 1_000_000)
        case 10_000...: String(format: "%.1fk", value / 1_000)
        case 100...: String(format: "%.0f", value)
        default: String(format: "%.2f", value)
        }
    }

    private static func pad(_ text: String, _ width: Int, right: Bool = false) -> String {
        let count = text.count
        guard count < width else { return String(text.prefix(width - 1)) + " " }
        let spaces = String(repeating: " ", count: width - count)
        return right ? spaces + text : text + spaces
    }
}
