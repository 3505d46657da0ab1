public import Foundation
public import MomentsHTTP
public import MomentsNetworking

extension HTTPClient {
    /// A client for a test: as `HTTPClient(baseURL:transport:configure:)`, but its calls'
    /// deadline is ten minutes unless `configure` sets one. A test about something else
    /// must not fail because a busy machine starved its process past the 30 s default
    /// (the suite under coverage, beside builds, was starved that long).
    public static func patient(
        baseURL: URL, transport: any HTTPTransport = URLSessionTransport(), configure: (inout Configuration) -> Void = { _ in }
    ) -> HTTPClient {
        var configuration = Configuration(baseURL: baseURL)
        configuration.timeout = .seconds(600)
        configure(&configuration)
        return HTTPClient(configuration: configuration, transport: transport)
    }
}
