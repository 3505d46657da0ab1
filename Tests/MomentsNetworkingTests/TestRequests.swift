import Foundation
import MomentsNetworking
import MomentsTestSupport
import MomentsGraphQL
import MomentsHTTP

struct User: Codable, Equatable, Sendable {
    var id: Int
    var name: String
}

struct APIError: Codable, Equatable, Sendable {
    var error: String
}

struct GetUser: Request {
    typealias Response = User
    var id: String
    var path: String { "/users/\(segment: id)" }
    func validate() throws {
        guard !id.isEmpty else { throw ValidationError("the user id is empty") }
    }
}

struct CreateUser: Request {
    typealias Response = User
    var user: User
    var path: String { "/users" }
    var method: HTTPMethod { .post }
    var body: RequestBody? { .json(user) }
    var headers: HTTPHeaders { ["Accept": "application/vnd.users+json", "X-Trace": "t-1"] }
    var query: [URLQueryItem] { [URLQueryItem(name: "notify", value: "a+b c")] }
    var options: RequestOptions { RequestOptions(timeout: .seconds(2)) }
}

struct DownloadAvatar: Request {
    typealias Response = Data
    var path: String { "/avatar" }
}

struct DeleteUser: Request {
    typealias Response = Void
    var path: String { "/users/1" }
    var method: HTTPMethod { .delete }
}

let testBaseURL = URL(string: "https://api.example.com/v1/")!

func jsonResponse(_ text: String, status: Int = 200, headers: HTTPHeaders = ["Content-Type": "application/json"]) -> HTTPResponse {
    HTTPResponse(statusCode: status, headers: headers, body: Data(text.utf8))
}

/// What the fixture server's `/echo` route saw.
struct Echo: Decodable, Sendable {
    var method: String
    var rawPath: String
    var rawQuery: String
    var headers: [String: String]
    var body: String
}

/// A GraphQL query for one user.
struct UserQuery: GraphQLOperation {
    typealias Response = User
    struct Variables: Encodable, Sendable { var id: String }
    struct ResponseData: Decodable, Sendable { var user: User }
    static let document = "query user($id: ID!) { user(id: $id) { id name } }"
    static let operationName = "user"
    var variables: Variables
    var cachePolicy: CachePolicy?
    var options: RequestOptions { RequestOptions(allowsRetry: true, isCacheable: true, cachePolicy: cachePolicy) }
    func extract(_ data: ResponseData) -> User { data.user }
}

/// A client of `transport` (in this process) for `testBaseURL`, with a ten-minute
/// deadline unless `configure` sets one (see `HTTPClient.patient`).
func testClient(_ transport: any HTTPTransport, configure: (inout HTTPClient.Configuration) -> Void = { _ in }) -> HTTPClient {
    HTTPClient.patient(baseURL: testBaseURL, transport: transport, configure: configure)
}
