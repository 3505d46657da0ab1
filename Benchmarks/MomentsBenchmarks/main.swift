// swift run -c release MomentsBenchmarks [--json] [--quick] [--only NAME[,NAME…]]
//
// Every figure is printed beside a baseline measured in the same run, with the ratio.
// Cases: decode, http, curl, cache, store, fanout, changes, sqlite, postgres, json, users, resilience.
import Foundation

let arguments = CommandLine.arguments.dropFirst()
let wantsJSON = arguments.contains("--json")
let quick = Harness.isQuick
let only: Set<String>? = arguments.firstIndex(of: "--only").flatMap { index in
    arguments.index(after: index) < arguments.endIndex ? Set(arguments[arguments.index(after: index)].split(separator: ",").map(String.init)) : nil
}

func selected(_ name: String) -> Bool { only?.contains(name) ?? true }

var rows: [Row] = []
var failures: [String] = []
var skipped: [String] = []

/// nginx and wrk, which the HTTP cases measure against: installed by
/// `Benchmarks/setup.sh` if missing (as root, or through sudo); without them those cases
/// are skipped with a note and the rest still run.
func ensureBenchmarkServers() {
    let nginx = ["/usr/sbin/nginx", "/usr/bin/nginx"].contains(where: FileManager.default.isExecutableFile(atPath:))
    guard !nginx else { return }
    FileHandle.standardError.write(Data("benchmarks: nginx is missing; installing it and wrk (Benchmarks/setup.sh)…\n".utf8))
    let setup = Process()
    setup.executableURL = URL(fileURLWithPath: "/usr/bin/env")
    setup.arguments = ["bash", "Benchmarks/setup.sh"]
    setup.standardOutput = FileHandle.standardError
    do {
        try setup.run()
        setup.waitUntilExit()
    } catch {
        FileHandle.standardError.write(Data("benchmarks: could not run Benchmarks/setup.sh: \(error)\n".utf8))
    }
}
@MainActor func attempt(_ name: String, _ body: () async throws -> [Row]) async {
    guard selected(name) else { return }
    do {
        let produced = try await body()
        rows += produced
        if !wantsJSON { Report.printRows(produced) }
    } catch let failure as BenchmarkFailure where failure.isMissingServer {
        skipped.append("\(name): \(failure)")
        if !wantsJSON { print("  (skipped \(name): \(failure))") }
    } catch {
        failures.append("\(name): \(error)")
        FileHandle.standardError.write(Data("benchmark \(name) failed: \(error)\n".utf8))
    }
}

if ["http", "curl", "cache", "observability", "breakdown", "profile", "curlprofile", "curlsoak", "sdkprofile"].contains(where: selected) { ensureBenchmarkServers() }

if !wantsJSON { Report.printHeader() }
await attempt("decode") { await DecodeBenchmark.run() }
await attempt("http") { try await HTTPBenchmark.run() }
await attempt("curl") { try await CurlBenchmark.run() }
if only?.contains("profile") == true { await attempt("profile") { try await HTTPBreakdown.profile(seconds: 8) } }
if only?.contains("curlprofile") == true {
    let width = Int(ProcessInfo.processInfo.environment["WIDTH"] ?? "64") ?? 64
    let moments = Int(ProcessInfo.processInfo.environment["MOMENTS"] ?? "4") ?? 4
    await attempt("curlprofile") {
        let seconds = Int(ProcessInfo.processInfo.environment["PROFILE_SECONDS"] ?? "8") ?? 8
        return try await CurlBenchmark.profile(seconds: seconds, width: width, moments: moments)
    }
}
if only?.contains("curlsoak") == true {
    let total = Int(ProcessInfo.processInfo.environment["REQUESTS"] ?? "1000000") ?? 1_000_000
    await attempt("curlsoak") { try await CurlSoak.run(total: total) }
}
if only?.contains("sdkprofile") == true {
    await attempt("sdkprofile") {
        var last: Row?
        for _ in 0..<20 { last = try await CurlBenchmark.sdkCostPerRequest(answer: BenchmarkData.envelope(BenchmarkData.timeline(moments: 4))) }
        return last.map { [$0] } ?? []
    }
}
for kind in ["json", "sqlite"] where only?.contains("hostile-\(kind)") == true {
    await attempt("hostile-\(kind)") { try await HostileAnswerBenchmark.run(persistence: kind) }
}
if only?.contains("storeprofile") == true { await attempt("storeprofile") { await StoreBenchmark.profile(seconds: Int(ProcessInfo.processInfo.environment["PROFILE_SECONDS"] ?? "") ?? 8) } }
if only?.contains("fanoutprofile") == true { await attempt("fanoutprofile") { await FanOutBenchmark.profile(changes: 200_000) } }
if only?.contains("decodeprofile") == true {
    await attempt("decodeprofile") { DecodeBenchmark.profile(seconds: Int(ProcessInfo.processInfo.environment["PROFILE_SECONDS"] ?? "") ?? 8) }
}
if only?.contains("breakdown") == true { await attempt("breakdown") { try await HTTPBreakdown.run() } }
await attempt("cache") { try await CacheBenchmark.run() }
await attempt("store") { await StoreBenchmark.run() }
await attempt("fanout") { await FanOutBenchmark.run() }
await attempt("changes") { await ChangeFeedBenchmark.run() }
await attempt("sqlite") { try await SQLiteBenchmark.run() }
await attempt("postgres") { try await PostgresBenchmark.run() }
await attempt("json") { try await JSONFileBenchmark.run() }
await attempt("users") { try await ManyUsersBenchmark.run(users: quick ? 10_000 : 100_000) }
await attempt("resilience") { try await ResilienceBenchmark.run() }
await attempt("observability") { try await ObservabilityBenchmark.run() }

if wantsJSON {
    Report.printJSON(rows)
} else {
    Report.printFooter(rows)
    if !skipped.isEmpty { print("skipped, their servers missing: \(skipped.joined(separator: "; "))") }
}
exit(failures.isEmpty ? 0 : 1)
