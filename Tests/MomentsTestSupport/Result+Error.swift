extension Result {
    /// The failure, or `nil` for a success.
    public var error: Failure? {
        if case .failure(let error) = self { return error }
        return nil
    }
}

extension Result where Failure == any Error {
    /// The outcome of `body`: its value, or what it threw.
    public init(awaiting body: () async throws -> Success) async {
        do {
            self = .success(try await body())
        } catch {
            self = .failure(error)
        }
    }
}
