import Foundation
import MomentsNetworking
import MomentsTestSupport
import Testing
import MomentsHTTP

/// File uploads cancelled, timed out and reset mid-body, through both transports: the
/// process never dies (FoundationNetworking's file uploads could abort it, resuming a
/// transfer that had lost its connection), and every call ends with a value or a typed
/// error. `MOMENTS_UPLOAD_SOAK` sets how many uploads each transport makes (the suite
/// makes 300; `Scripts/soak.sh` runs thousands, beside a build).
@Suite struct UploadFaultSoakTests {
    private static var uploads: Int {
        Int(ProcessInfo.processInfo.environment["MOMENTS_UPLOAD_SOAK"] ?? "") ?? 300
    }

    private enum Fault: CaseIterable {
        case none, cancelled, timedOut, resetMidBody
    }

    @Test(arguments: TransportKind.allCases)
    func everyFaultyUploadEndsWithAValueOrATypedError(kind: TransportKind) async throws {
        let server = try await RawServer.start()
        defer { server.stop() }
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        var files: [URL] = []
        for (index, size) in [16 << 10, 256 << 10, 1 << 20].enumerated() {
            let file = directory.url.appendingPathComponent("upload-\(index).bin")
            try Data(repeating: UInt8(index), count: size).write(to: file)
            files.append(file)
        }
        let client = HTTPClient.patient(baseURL: server.url("/"), transport: try kind.make()) {
            $0.circuitBreaker = nil
            $0.retryBudget = nil
        }
        var generator = SeededGenerator(seed: 22)
        var outcomes: [String: Int] = [:]
        let count = Self.uploads
        for round in 0..<count {
            let fault = Fault.allCases.randomElement(using: &generator) ?? .none
            let file = files.randomElement(using: &generator) ?? files[0]
            let cutAfter = Int.random(in: 0..<(64 << 10), using: &generator)
            let yields = Int.random(in: 0..<200, using: &generator)
            // /bytes reads the whole body and answers two bytes; /cut-upload resets mid-body.
            var request = Endpoint<Data>(.post, fault == .resetMidBody ? "/cut-upload" : "/bytes").body(.file(file))
            request = fault == .resetMidBody ? request.query("after", String(cutAfter)) : request.query("count", "2")
            if fault == .timedOut { request = request.options { $0.timeout = .milliseconds(Int.random(in: 1...20, using: &generator)) } }
            let upload = Task { try await client.send(request) }
            if fault == .cancelled {
                for _ in 0..<yields { await Task.yield() }
                upload.cancel()
            }
            switch await upload.result {
            case .success: outcomes["answered", default: 0] += 1
            case .failure(let error as HTTPClientError): outcomes["\(error.code)", default: 0] += 1
            case .failure(let error): Issue.record("round \(round), \(fault): an untyped error \(error)")
            }
        }
        #expect(outcomes.values.reduce(0, +) == count)
        #expect(outcomes["answered", default: 0] > 0, "\(outcomes)")
        #expect(outcomes.keys.count > 1, "faults happened: \(outcomes)")
        #expect(client.requestsInFlight == 0)
    }
}
