import Foundation
import Moments
import MomentsNetworking
import MomentsTestSupport
import Testing
import MomentsSupport
import MomentsObservability
import MomentsCaching
import MomentsHTTP
import MomentsBFF

@Suite(.serialized) struct SecurityTests {
    static let token = "tok-5f3c9e1a-secret-must-never-show"

    /// Every log record and error text produced while using a token, through success,
    /// faults, refused tokens and debug logging, is searched for the token.
    @Test func theTokenNeverAppearsInLogsErrorsOrDescriptions() async throws {
        let bff = try await ReferenceBFF(token: Self.token)
        defer { bff.stop() }
        let sink = TextSink()
        func collect(_ text: String) { sink.add(text) }
        func client(token: String) -> HTTPClient {
            var configuration = HTTPClient.Configuration(baseURL: bff.baseURL)
            configuration.authentication = AuthenticationMiddleware(provider: StaticTokenProvider(token))
            configuration.logLevel = .debug
            configuration.logHandler = { record in sink.add(record.description) }
            configuration.metricsHandler = { metrics in sink.add(String(describing: metrics)) }
            configuration.retryPolicy = RetryPolicy(maximumAttempts: 2, initialDelay: .milliseconds(5))
            // Every fault ends its call at once: the deadline only bounds a machine so
            // busy that a loopback answer takes seconds.
            configuration.timeout = .seconds(30)
            return HTTPClient(configuration: configuration, transport: URLSessionTransport())
        }
        let good = GraphQLMomentsService(client: client(token: Self.token))
        let wrong = GraphQLMomentsService(client: client(token: Self.token + "-expired"))

        _ = try await good.getMoments(userID: "0")
        _ = try await good.updateLike(true, momentID: "1", fromUserID: "0")
        for fault in ["reset", "malformed", "graphqlError", "html", "truncated"] {
            try await bff.injectFault(["kind": fault, "count": 2])
            do { _ = try await good.getMoments(userID: "0") } catch { collect(String(describing: error)); collect(String(reflecting: error)) }
        }
        do { _ = try await wrong.getMoments(userID: "0") } catch { collect(String(describing: error)); collect(String(reflecting: error)) }
        do { _ = try await good.getMoments(userID: "nobody") } catch { collect(String(describing: error)) }
        let request = try good.client.makeHTTPRequest(for: GetMomentsByUserID(userID: "0"))
        var withToken = request
        withToken.headers["Authorization"] = "Bearer \(Self.token)"
        collect(withToken.headers.description)
        collect(String(describing: withToken.headers))

        let all = sink.all
        #expect(all.count > 10)
        for text in all {
            #expect(!text.contains(Self.token), "the token leaked into: \(text.prefix(200))")
            #expect(!text.contains("tok-5f3c9e1a"))
        }
    }

    /// A hostile answer cannot make the SDK write outside its storage directory.
    @Test func aHostileAnswerCannotWriteOutsideTheStorageDirectory() async throws {
        let root = try TemporaryDirectory()
        defer { root.remove() }
        let storage = root.url.appendingPathComponent("storage")
        let hostile = "../../../../tmp/escape/\u{0}/..%2F..%2F"
        let answer = MomentsDetails(
            userDetails: UserDetails(id: hostile, name: hostile, avatar: "../../a", backgroundImage: "/etc/passwd"),
            moments: [Moment(id: hostile, userDetails: .init(id: "../x", name: "..", avatar: "/"), type: .url, title: "../../../t",
                             url: "file:///etc/passwd", photos: ["../../p"], createdDate: "../0", isLiked: false, likes: [.init(id: "../../u", avatar: "/")])]
        )
        let body = try JSONEncoder().encode(["data": ["getMomentsDetailsByUserID": answer, "updateMomentLike": answer]])
        let diskCache = try DiskResponseCache(directory: storage.appendingPathComponent("cache"))
        let client = HTTPClient.patient(baseURL: URL(string: "http://bff.test")!, transport: StubTransport(statusCode: 200, body: body)) {
            $0.cache = TieredResponseCache(memory: MemoryResponseCache(), disk: diskCache)
        }
        let store = MomentsStore(service: GraphQLMomentsService(client: client), persistence: try JSONFilePersistence(directory: storage.appendingPathComponent("timelines")))

        for user in ["0", hostile, "../../etc", "/abs"] {
            _ = try await store.refresh(userID: user)
            _ = try? await store.setLike(true, momentID: hostile, userID: user)
        }

        let everything = FileManager.default.enumerator(atPath: root.url.path)?.allObjects as? [String] ?? []
        #expect(!everything.isEmpty)
        for path in everything {
            #expect(path == "storage" || path.hasPrefix("storage/"), "written outside the storage directory: \(path)")
        }
        #expect(!FileManager.default.fileExists(atPath: "/tmp/escape"))
    }
}

final class TextSink: Sendable {
    private let texts = PThreadMutex<[String]>([])
    func add(_ text: String) { texts.withLock { $0.append(text) } }
    var all: [String] { texts.withLock { $0 } }
}
