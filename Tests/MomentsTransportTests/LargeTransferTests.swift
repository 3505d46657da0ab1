import Foundation
import MomentsNetworking
import MomentsTestSupport
import Testing

/// 200 MB uploaded (as a file, and as a form's part) and downloaded to a file through
/// each transport, in a process of its own (`MomentsTransferProbe`) so that its memory
/// measures the transfer alone: every byte must arrive (hashed on both sides), and the
/// process must grow by less than 32 MB (a URLSession download, whose memory follows its
/// delegate queue's lag, is reported when it does not). URLSession sends a streamed body
/// from memory, up to its limit: it refuses a 200 MB one, naming the transport that
/// streams it, before reading any of it.
@Suite(.serialized) struct LargeTransferTests {
    static let size = 200 << 20
    static let growthLimitKiB = 32 << 10

    struct Report: Decodable {
        struct Server: Decodable {
            struct Part: Decodable {
                let name: String?
                let length: Int
                let sha256: String
            }

            let length: Int?
            let sha256: String?
            let parts: [Part]?
            let refused: String?
        }

        let server: Server
        let rssBeforeKiB: Int
        let peakKiB: Int
    }

    /// The file, written a megabyte at a time on a thread of its own (200 writes would
    /// hold one of Swift's threads), and its SHA-256.
    static func makeFile(in directory: TemporaryDirectory) async throws -> (URL, String) {
        let url = directory.url.appendingPathComponent("large.bin")
        try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Void, any Error>) in
            Thread {
                do {
                    _ = FileManager.default.createFile(atPath: url.path, contents: nil)
                    let handle = try FileHandle(forWritingTo: url)
                    var block = [UInt8](repeating: 0, count: 1 << 20)
                    for index in 0..<(size >> 20) {
                        for offset in stride(from: 0, to: block.count, by: 4_096) { block[offset] = UInt8(truncatingIfNeeded: index &+ offset >> 12) }
                        try handle.write(contentsOf: block)
                    }
                    try handle.close()
                    continuation.resume()
                } catch {
                    continuation.resume(throwing: error)
                }
            }.start()
        }
        return (url, try await FileDigest.sha256(of: url))
    }

    static func probe(_ kind: TransportKind, mode: String, file: URL, server: ScriptServer) async throws -> Report {
        let process = Process()
        process.discardingCoverageProfile()
        process.executableURL = URL(fileURLWithPath: CommandLine.arguments[0]).deletingLastPathComponent().appendingPathComponent("MomentsTransferProbe")
        process.arguments = [kind == .curl ? "curl" : "urlsession", mode, server.baseURL.absoluteString, file.path]
        let (status, out, err) = try await process.runCapturingOutput()
        guard status == 0 else { throw ProbeFailure(status: status, output: out + err) }
        return try JSONDecoder().decode(Report.self, from: Data(out.utf8))
    }

    struct ProbeFailure: Error, CustomStringConvertible {
        let status: Int32
        let output: String
        var description: String { "the probe exited \(status): \(output)" }
    }

    @Test func twoHundredMegabytesStreamThroughEachTransportInLittleMemory() async throws {
        let server = try await ScriptServer(script: "Tools/fixture-server/upload_server.py")
        defer { server.stop() }
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let (file, digest) = try await Self.makeFile(in: directory)
        for kind in TransportKind.allCases {
            for mode in ["file", "multipart"] {
                let report = try await Self.probe(kind, mode: mode, file: file, server: server)
                let growth = report.peakKiB - report.rssBeforeKiB
                #expect(growth < Self.growthLimitKiB, "\(kind) \(mode): the process grew by \(growth) KiB")
                if kind == .urlSession {
                    #expect(report.server.refused?.contains("CurlTransport") == true, "\(mode): \(String(describing: report.server))")
                    continue
                }
                let received = mode == "file" ? (report.server.length ?? 0, report.server.sha256 ?? "") : report.server.parts.map { parts in
                    (parts.last?.length ?? 0, parts.last?.sha256 ?? "")
                } ?? (0, "")
                #expect(received.0 == Self.size, "\(kind) \(mode): the server received \(received.0) bytes")
                #expect(received.1 == digest, "\(kind) \(mode): the server's hash differs")
            }
        }
    }

    @Test func twoHundredMegabytesDownloadToAFileThroughEachTransportInLittleMemory() async throws {
        let server = try await ScriptServer(script: "Tools/fixture-server/upload_server.py")
        defer { server.stop() }
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        for kind in TransportKind.allCases {
            let file = directory.url.appendingPathComponent("download-\(kind).bin")
            let report = try await Self.probe(kind, mode: "download", file: file, server: server)
            #expect((try FileManager.default.attributesOfItem(atPath: file.path)[.size] as? Int) == Self.size)
            #expect(try await FileDigest.sha256(of: file) == report.server.sha256, "\(kind): the file differs from what was sent")
            let growth = report.peakKiB - report.rssBeforeKiB
            switch kind {
            case .curl:
                #expect(growth < Self.growthLimitKiB, "\(kind) download: the process grew by \(growth) KiB")
            case .urlSession:
                // FoundationNetworking hands each chunk to the delegate's queue, with no
                // way to pause the transfer: memory grows with that queue's lag (33 to 61 MB
                // measured while the suite ran beside the probe, 114 MB once). The body is
                // never held whole: that bound (three quarters of it) is firm, the tighter
                // one is the known issue.
                #expect(growth < Self.size / 1_024 * 3 / 4, "\(kind) download: the process grew by \(growth) KiB, as if it held the body")
                withKnownIssue("URLSession download memory follows the delegate queue's lag", isIntermittent: true) {
                    #expect(growth < Self.growthLimitKiB, "\(kind) download: the process grew by \(growth) KiB")
                }
            }
            try FileManager.default.removeItem(at: file)
        }
    }
}
