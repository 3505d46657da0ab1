import Foundation
import MomentsHTTP
@testable import MomentsNetworking
import Testing

/// A transport that answers in memory and reports no progress (the least the transport
/// contract asks): the client writes a download to its file, holds the answer to the
/// size limit and reports the exchange's progress, under the rules the shipped
/// transports follow themselves.
@Suite struct AnswerInMemoryTests {
    private let directory: URL

    init() throws {
        directory = FileManager.default.temporaryDirectory.appendingPathComponent("in-memory-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
    }

    private func client(answering body: Data, limit: Int? = nil) -> HTTPClient {
        testClient(StubTransport(statusCode: 200, body: body)) {
            $0.maximumResponseSize = limit
        }
    }

    @Test func aDownloadAnsweredInMemoryIsWrittenToItsFileOwnerOnly() async throws {
        defer { try? FileManager.default.removeItem(at: directory) }
        let destination = directory.appendingPathComponent("export.bin")
        try Data("an older file, longer than the answer".utf8).write(to: destination)
        let body = Data((0..<100_000).map { UInt8(truncatingIfNeeded: $0 &* 7) })
        let file = try await client(answering: body).send(FileDownload(path: "/export", to: destination))
        #expect(file == destination)
        #expect(try Data(contentsOf: destination) == body, "the whole body, and nothing of the older file")
        let permissions = try FileManager.default.attributesOfItem(atPath: destination.path)[.posixPermissions] as? Int
        #expect(permissions == 0o600)
    }

    @Test func anAnswerOverTheLimitFailsAndLeavesNoFile() async throws {
        defer { try? FileManager.default.removeItem(at: directory) }
        let destination = directory.appendingPathComponent("too-large.bin")
        let download = client(answering: Data(count: 2_048), limit: 1_024)
        let error = await #expect(throws: HTTPClientError.self) {
            try await download.send(FileDownload(path: "/export", to: destination))
        }
        #expect(error?.code == .responseTooLarge)
        #expect(!FileManager.default.fileExists(atPath: destination.path))
    }

    @Test func aFileThatCannotBeWrittenIsATypedFailure() async throws {
        defer { try? FileManager.default.removeItem(at: directory) }
        let destination = directory.appendingPathComponent("missing-folder/export.bin")
        let error = await #expect(throws: HTTPClientError.self) {
            try await client(answering: Data("body".utf8)).send(FileDownload(path: "/export", to: destination))
        }
        #expect(error?.code == .invalidRequest)
        #expect(error?.description.contains(destination.path) == true, "the failure names the file: \(String(describing: error))")
    }

    @Test func aTransferWhoseTransportReportsNothingEndsWithItsWholeExchange() async throws {
        let body = Data(repeating: 0x41, count: 3_000)
        let upload = Endpoint<Data>(.post, "/upload").body(.data(Data(count: 1_234), contentType: "application/octet-stream"))
        let transfer = client(answering: body).transfer(upload)
        var last: TransferProgress?
        for await progress in transfer.progress { last = progress }
        #expect(try await transfer.value == body)
        #expect(last?.sent == 1_234)
        #expect(last?.received == 3_000)
    }
}
