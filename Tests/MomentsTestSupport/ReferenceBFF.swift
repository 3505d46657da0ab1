public import Foundation
import MomentsNetworking
import MomentsHTTP

/// The reference BFF (`Tools/bff/server.py`) run as a child process on a free port.
public final class ReferenceBFF {
    public let server: ScriptServer
    private let control: HTTPClient

    public var baseURL: URL { server.baseURL }
    public var port: Int { server.port }

    /// Starts the BFF; `users` adds generated users `user-1`…`user-N`; `globalIsLiked`
    /// keeps one `isLiked` per moment whoever asks, as the public BFF does (it may then
    /// disagree with `likes`).
    public init(users: Int = 0, momentsPerUser: Int = 10, token: String? = nil, globalIsLiked: Bool = false) async throws {
        var arguments = ["--exit-with-stdin", "--users", "\(users)", "--moments-per-user", "\(momentsPerUser)"]
        if let token { arguments += ["--token", token] }
        if globalIsLiked { arguments += ["--is-liked", "global"] }
        server = try await ScriptServer(script: "Tools/bff/server.py", arguments: arguments)
        control = HTTPClient(baseURL: server.baseURL, transport: URLSessionTransport())
    }

    /// Injects a fault into the next answers (see `Tools/bff/faults.py`).
    public func injectFault(_ fault: [String: any Sendable]) async throws {
        let body = try JSONSerialization.data(withJSONObject: fault)
        _ = try await control.send(Endpoint<Data>(.post, "/__faults").body(.data(body, contentType: "application/json")))
    }

    /// Clears faults.
    public func clearFaults() async throws {
        _ = try await control.send(Endpoint<Data>(.delete, "/__faults"))
    }

    /// Restores the initial data and clears faults.
    public func reset() async throws {
        _ = try await control.send(Endpoint<Data>(.post, "/__reset"))
    }

    /// Stops the BFF.
    public func stop() { server.stop() }

    /// Stops the BFF and waits until it has exited: a connection is then refused.
    public func stopAndWait() async { await server.stopAndWait() }
}
