import Foundation
import Moments
import MomentsNetworking
import MomentsTestSupport
import Testing
import MomentsTestTraits
import MomentsSupport
import MomentsHTTP
import MomentsBFF

/// Mutated BFF answers through decoding and the store: each ends in a value or a typed
/// error, and the store only ever holds and emits valid timelines.
@Suite(.ownThread) struct FuzzTests {
    /// Answers with whatever body the test sets next.
    final class MutableAnswer: Sendable {
        let body = PThreadMutex(Data())
        var transport: StubTransport {
            StubTransport { _ in HTTPResponse(statusCode: 200, body: self.body.withLock { $0 }) }
        }
    }

    static let original: String = {
        let details = SampleTimelines.timeline(user: "0", moments: 5)
        let data = (try? JSONEncoder().encode(["data": ["getMomentsDetailsByUserID": details]])) ?? Data()
        return String(decoding: data, as: UTF8.self)
    }()

    /// Structure-aware and byte-level mutations of a valid answer.
    static func mutate(_ text: String, using generator: inout SeededGenerator) -> Data {
        var bytes = Array(text.utf8)
        switch Int.random(in: 0..<9, using: &generator) {
        case 0: // random bytes
            for _ in 0..<Int.random(in: 1...8, using: &generator) {
                bytes[Int.random(in: 0..<bytes.count, using: &generator)] = UInt8.random(in: 0...255, using: &generator)
            }
        case 1: // delete a key (and its value, roughly)
            let keys = ["\"id\"", "\"name\"", "\"type\"", "\"photos\"", "\"createdDate\"", "\"likes\"", "\"userDetails\"", "\"moments\"", "\"data\""]
            let key = keys.randomElement(using: &generator)!
            return Data(text.replacingOccurrences(of: key, with: "\"x\(Int.random(in: 0...9, using: &generator))\"").utf8)
        case 2: // duplicate a key
            return Data(text.replacingOccurrences(of: "\"id\":", with: "\"id\":\"dup\",\"id\":").utf8)
        case 3: // wrong types
            let swaps = [("\"photos\":[", "\"photos\":{\"a\":["), ("\"isLiked\":true", "\"isLiked\":\"yes\""),
                         ("\"createdDate\":\"", "\"createdDate\":1605,\"z\":\""), ("\"type\":\"URL\"", "\"type\":7")]
            let (from, to) = swaps.randomElement(using: &generator)!
            return Data(text.replacingOccurrences(of: from, with: to).utf8)
        case 4: // deep nesting
            let depth = Int.random(in: 100...20_000, using: &generator)
            let nested = String(repeating: "[", count: depth) + String(repeating: "]", count: depth)
            return Data(text.replacingOccurrences(of: "\"photos\":[]", with: "\"photos\":\(nested)").utf8)
        case 5: // huge strings
            let huge = String(repeating: "Ω", count: Int.random(in: 10_000...200_000, using: &generator))
            return Data(text.replacingOccurrences(of: "\"User 0\"", with: "\"\(huge)\"").utf8)
        case 6: // invalid UTF-8
            bytes.insert(contentsOf: [0xC3, 0x28, 0xFF], at: Int.random(in: 0..<bytes.count, using: &generator))
        case 7: // truncate
            bytes = Array(bytes.prefix(Int.random(in: 0..<bytes.count, using: &generator)))
        default: // delete or duplicate a span
            let start = Int.random(in: 0..<bytes.count, using: &generator)
            let end = min(bytes.count, start + Int.random(in: 1...40, using: &generator))
            if Bool.random(using: &generator) { bytes.removeSubrange(start..<end) } else { bytes.insert(contentsOf: bytes[start..<end], at: end) }
        }
        return Data(bytes)
    }

    @Test func mutatedAnswersEndInAValueOrATypedError() async throws {
        let answer = MutableAnswer()
        let client = HTTPClient.patient(baseURL: URL(string: "http://bff.test")!, transport: answer.transport)
        var generator = SeededGenerator(seed: 7)
        var outcomes = (values: 0, errors: 0)
        for _ in 0..<4_000 {
            answer.body.withLock { $0 = Self.mutate(Self.original, using: &generator) }
            do {
                let details = try await client.send(GetMomentsByUserID(userID: "0"))
                // A value must survive a round trip through its own encoding.
                #expect(try JSONDecoder().decode(MomentsDetails.self, from: JSONEncoder().encode(details)) == details)
                outcomes.values += 1
            } catch let error as HTTPClientError {
                #expect([.decodingFailure, .graphQLFailure].contains(error.code), "\(error)")
                outcomes.errors += 1
            }
        }
        #expect(outcomes.values + outcomes.errors == 4_000)
        #expect(outcomes.values > 0 && outcomes.errors > 0)
    }

    @Test func theStoreOnlyKeepsValidTimelines() async throws {
        let answer = MutableAnswer()
        let service = GraphQLMomentsService(client: HTTPClient.patient(baseURL: URL(string: "http://bff.test")!, transport: answer.transport))
        let persistence = InMemoryPersistence()
        let store = MomentsStore(service: service, persistence: persistence)
        answer.body.withLock { $0 = Data(Self.original.utf8) }
        var last = try await store.refresh(userID: "0")
        let probe = StreamProbe(await store.updates(for: "0"))
        var generator = SeededGenerator(seed: 11)

        for _ in 0..<1_500 {
            answer.body.withLock { $0 = Self.mutate(Self.original, using: &generator) }
            do {
                last = try await store.refresh(userID: "0")
            } catch let error as MomentsStoreError {
                #expect(error.code == .duplicateMomentID, "\(error)")
            } catch {
                #expect(error is HTTPClientError, "\(error)")
            }
            #expect(try await store.details(for: "0") == last)
            #expect(await persistence.load(userID: "0") == last)
        }
        #expect(await probe.waitUntil { $0 == last } == last)
    }
}
