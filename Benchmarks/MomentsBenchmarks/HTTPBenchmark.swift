import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import Moments
import MomentsNetworking
import MomentsSupport
import MomentsBFF

/// Round trips through `GraphQLMomentsService` against nginx serving a fixed answer,
/// beside bare `URLSession.data(for:)` against the same server; wrk gives the server's
/// own ceiling.
enum HTTPBenchmark {
    static func run() async throws -> [Row] {
        let answer = BenchmarkData.envelope(BenchmarkData.timeline(moments: 4))
        let server = try NginxServer(answer: answer)
        defer { server.stop() }
        var rows: [Row] = []

        let ceiling = server.ceiling(connections: 64, seconds: 3)
        rows.append(Row(name: "nginx ceiling (wrk, 64 connections)", unit: "req/s", sdk: ceiling, note: "the physical limit on this machine"))

        let client = HTTPClient(baseURL: server.baseURL, transport: URLSessionTransport()) {
            $0.coalescesRequests = false  // every call must reach the server, as in the baseline
        }
        let service = GraphQLMomentsService(client: client)
        let body = try JSONEncoder().encode(["query": GetMomentsByUserID.document, "operationName": "getMomentsDetailsByUserID"])
        var request = URLRequest(url: server.baseURL.appendingPathComponent("graphql"))
        request.httpMethod = "POST"
        request.httpBody = body
        request.setValue("application/json", forHTTPHeaderField: "Content-Type")
        let session = URLSession(configuration: .default)
        let urlRequest = request

        _ = try await service.getMoments(userID: "0")
        _ = try await session.data(for: urlRequest)

        let sequential = try await Harness.compare(
            sdk: { try await Harness.rate(for: Harness.roundDuration) { _ = try await service.getMoments(userID: "0"); return 1 } },
            baseline: { try await Harness.rate(for: Harness.roundDuration) { _ = try await session.data(for: urlRequest); return 1 } }
        )
        rows.append(Harness.row("round trip, 1 at a time", unit: "req/s", sequential, target: 0.90))

        let concurrent = try await Harness.compare(
            sdk: { try await concurrently(64) { _ = try await service.getMoments(userID: "0") } },
            baseline: { try await concurrently(64) { _ = try await session.data(for: urlRequest) } }
        )
        rows.append(Harness.row("round trip, 64 concurrent", unit: "req/s", concurrent, target: 0.90))
        return rows
    }

    /// Requests per second with `width` tasks each looping for one round.
    static func concurrently(_ width: Int, _ body: @escaping @Sendable () async throws -> Void) async throws -> Double {
        let duration = Harness.roundDuration
        let (total, seconds) = try await Harness.window { start in
            try await withThrowingTaskGroup(of: Int.self) { group in
                for _ in 0..<width {
                    group.addTask {
                        var count = 0
                        while ContinuousClock.now - start < duration {
                            try await body()
                            count += 1
                        }
                        return count
                    }
                }
                return try await group.reduce(0, +)
            }
        }
        return Double(total) / seconds
    }
}

/// nginx on a free loopback port answering every POST /graphql with `answer`.
final class NginxServer {
    let port: Int
    let directory: URL
    private let process: Process

    var baseURL: URL { URL(string: "http://127.0.0.1:\(port)")! }

    convenience init(answer: Data) throws {
        try self.init(answers: ["/graphql": answer])
    }

    /// Serves each answer at its path (to POST and GET alike).
    /// `extraLocations` are nginx `location` blocks added as they are (faults, for the soak).
    init(answers: [String: Data], extraLocations: [String] = []) throws {
        guard let binary = ["/usr/sbin/nginx", "/usr/bin/nginx"].first(where: FileManager.default.isExecutableFile(atPath:)) else {
            throw BenchmarkFailure("nginx is not installed (Benchmarks/setup.sh installs it)", isMissingServer: true)
        }
        port = freePort()
        directory = FileManager.default.temporaryDirectory.appendingPathComponent("moments-nginx-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        // Each answer is a file; a POST to a static file is refused (405), so the 405 is
        // turned into an internal GET of that file.
        var locations: [String] = extraLocations
        for (index, (path, answer)) in answers.sorted(by: { $0.key < $1.key }).enumerated() {
            try answer.write(to: directory.appendingPathComponent("answer-\(index).json"))
            locations.append("""
                    location = \(path) { error_page 405 =200 /answer-\(index).json; return 405; }
                    location = /answer-\(index).json { internal; root \(directory.path); default_type application/json; }
            """)
        }
        let config = """
            worker_processes 1;
            daemon off;
            pid \(directory.path)/nginx.pid;
            error_log \(directory.path)/error.log crit;
            events { worker_connections 1024; }
            http {
                access_log off;
                client_body_temp_path \(directory.path)/body;
                proxy_temp_path \(directory.path)/proxy;
                fastcgi_temp_path \(directory.path)/fastcgi;
                uwsgi_temp_path \(directory.path)/uwsgi;
                scgi_temp_path \(directory.path)/scgi;
                keepalive_requests 1000000;
                server {
                    listen 127.0.0.1:\(port);
            \(locations.joined(separator: "\n"))
                }
            }
            """
        try config.write(to: directory.appendingPathComponent("nginx.conf"), atomically: true, encoding: .utf8)
        process = Process()
        process.executableURL = URL(fileURLWithPath: binary)
        process.arguments = ["-c", directory.appendingPathComponent("nginx.conf").path, "-p", directory.path]
        process.standardError = FileHandle.nullDevice
        try process.run()
        for _ in 0..<100 where !isListening(port) { usleep(20_000) }
        guard isListening(port) else { throw BenchmarkFailure("nginx did not start") }
    }

    /// The server's own rate under wrk with `connections` connections.
    func ceiling(connections: Int, seconds: Int) -> Double {
        let script = directory.appendingPathComponent("post.lua")
        try? #"wrk.method = "POST"; wrk.body = "{}"; wrk.headers["Content-Type"] = "application/json""#
            .write(to: script, atomically: true, encoding: .utf8)
        let wrk = Process()
        wrk.executableURL = URL(fileURLWithPath: "/usr/bin/wrk")
        wrk.arguments = ["-t2", "-c\(connections)", "-d\(seconds)s", "-s", script.path, baseURL.appendingPathComponent("graphql").absoluteString]
        let output = Pipe()
        wrk.standardOutput = output
        guard (try? wrk.run()) != nil else { return 0 }
        let text = String(decoding: output.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        wrk.waitUntilExit()
        let line = text.split(separator: "\n").first { $0.hasPrefix("Requests/sec:") }
        return line.flatMap { Double($0.split(separator: " ").last ?? "") } ?? 0
    }

    func stop() {
        process.terminate()
        process.waitUntilExit()
        try? FileManager.default.removeItem(at: directory)
    }
}

struct BenchmarkFailure: Error, CustomStringConvertible {
    let description: String
    /// A server the case measures against is not installed: the case is skipped.
    var isMissingServer = false
    init(_ description: String, isMissingServer: Bool = false) {
        self.description = description
        self.isMissingServer = isMissingServer
    }
}

func freePort() -> Int {
    let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
    defer { close(fd) }
    var address = sockaddr_in()
    address.sin_family = sa_family_t(AF_INET)
    address.sin_addr.s_addr = inet_addr("127.0.0.1")
    var length = socklen_t(MemoryLayout<sockaddr_in>.size)
    _ = withUnsafePointer(to: &address) { $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, length) } }
    _ = withUnsafeMutablePointer(to: &address) { $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(fd, $0, &length) } }
    return Int(UInt16(bigEndian: address.sin_port))
}

func isListening(_ port: Int) -> Bool {
    let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
    defer { close(fd) }
    var address = sockaddr_in()
    address.sin_family = sa_family_t(AF_INET)
    address.sin_addr.s_addr = inet_addr("127.0.0.1")
    address.sin_port = UInt16(port).bigEndian
    return withUnsafePointer(to: &address) {
        $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) == 0 }
    }
}
