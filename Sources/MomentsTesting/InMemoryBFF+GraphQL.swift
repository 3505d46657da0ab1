import Foundation
public import MomentsHTTP
import MomentsGraphQL
import MomentsSupport

extension InMemoryBFF {
    /// Answers one GraphQL request, as the BFF at `/graphql` does: a `POST` of
    /// `{"query", "operationName", "variables"}`. A body that is not such JSON is a 400
    /// with a GraphQL error; another method a 405.
    public func send(_ request: HTTPRequest) async throws -> HTTPResponse {
        if Task.isCancelled { throw HTTPClientError.cancelled() }
        guard request.method == .post else {
            return Self.json(405, #"{"errors":[{"message":"use POST"}]}"#)
        }
        guard let body = GraphQLRequestBody(request.body), let operation = body.operation else {
            return Self.json(400, #"{"errors":[{"message":"the body must be JSON with a 'query' string"}]}"#)
        }
        let answer: String
        switch operation {
        case "getMomentsDetailsByUserID":
            guard let userID = body.string("userID") else { return Self.missingVariable("userID") }
            let withLikes = body.bool("withLikes") ?? true
            answer = data.withLock { data in
                data.queries += 1
                return field(operation, of: timeline(userID, withLikes: withLikes, in: data), user: userID)
            }
        case "updateMomentLike":
            guard let userID = body.string("userID") else { return Self.missingVariable("userID") }
            guard let momentID = body.string("momentID") else { return Self.missingVariable("momentID") }
            guard let isLiked = body.bool("isLiked") else { return Self.missingVariable("isLiked") }
            answer = data.withLock { data in
                if data.users[userID] != nil {
                    data.mutations += 1
                    applyLike(isLiked, momentID: momentID, userID: userID, to: &data)
                }
                return field(operation, of: timeline(userID, withLikes: true, in: data), user: userID)
            }
        default:
            return Self.json(400, #"{"errors":[{"message":\#(JSONText.string("unknown operation \(operation)"))}]}"#)
        }
        let response = Self.json(200, answer)
        if let limit = request.maximumResponseSize, response.body.count > limit {
            throw HTTPClientError.responseTooLarge(limit: limit, received: response.body.count)
        }
        return response
    }

    /// The `data` envelope of `operation`'s root field, or, without a value, the error of
    /// the unknown `user`.
    private func field(_ operation: String, of value: String?, user: String) -> String {
        if let value { return #"{"data":{"\#(operation)":\#(value)}}"# }
        return #"{"data":null,"errors":[{"message":\#(JSONText.string("no user with id '\(user)'")),"path":["\#(operation)"]}]}"#
    }

    /// `userID`'s timeline as JSON, in the order of the SDK's selection; `nil` for an
    /// unknown user.
    func timeline(_ userID: String, withLikes: Bool, in data: Contents) -> String? {
        guard let owner = data.users[userID] else { return nil }
        var json = #"{"userDetails":"# + Self.user(owner, background: true) + #","moments":["#
        for (index, momentID) in (data.timelines[userID] ?? []).enumerated() {
            guard let moment = data.moments[momentID] else { continue }
            if index > 0 { json += "," }
            let author = data.users[moment.author] ?? User(id: moment.author, name: "", avatar: "", backgroundImage: "")
            json += #"{"id":"# + JSONText.string(moment.id)
            json += #","userDetails":"# + Self.user(author, background: false)
            json += #","type":"# + JSONText.string(moment.type)
            json += #","title":"# + (moment.title.map(JSONText.string) ?? "null")
            json += #","url":"# + (moment.url.map(JSONText.string) ?? "null")
            json += #","photos":["# + moment.photos.map(JSONText.string).joined(separator: ",") + "]"
            json += #","createdDate":"# + JSONText.string(moment.createdDate)
            if withLikes {
                json += #","isLiked":"# + (isLiked(momentID, viewer: userID, in: data) ? "true" : "false")
                let likes = (data.likers[momentID] ?? []).map { liker in
                    #"{"id":"# + JSONText.string(liker) + #","avatar":"# + JSONText.string(data.users[liker]?.avatar ?? "") + "}"
                }
                json += #","likes":["# + likes.joined(separator: ",") + "]"
            }
            json += "}"
        }
        return json + "]}"
    }

    private static func user(_ user: User, background: Bool) -> String {
        var json = #"{"id":"# + JSONText.string(user.id) + #","name":"# + JSONText.string(user.name)
        json += #","avatar":"# + JSONText.string(user.avatar)
        if background { json += #","backgroundImage":"# + JSONText.string(user.backgroundImage) }
        return json + "}"
    }

    private static func missingVariable(_ name: String) -> HTTPResponse {
        json(400, #"{"errors":[{"message":\#(JSONText.string("variable \(name) is missing or of the wrong type"))}]}"#)
    }

    private static func json(_ status: Int, _ text: String) -> HTTPResponse {
        HTTPResponse(statusCode: status, headers: ["Content-Type": "application/json"], body: Foundation.Data(text.utf8))
    }
}

/// JSON text of Swift values.
enum JSONText {
    /// `value` as a JSON string (`JSONString`'s escaping).
    static func string(_ value: String) -> String {
        var bytes: [UInt8] = []
        JSONString.appendQuoted(value, to: &bytes)
        return String(decoding: bytes, as: UTF8.self)
    }
}
