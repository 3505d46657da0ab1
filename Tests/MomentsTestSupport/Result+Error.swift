extension Result {
    /// The failure, or `nil` for a success.
    public var error: Failure? {
        if case .failure(let error) = self { return error }
        return nil
    }
}
