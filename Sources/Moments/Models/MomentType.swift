extension Moment {
    /// What a moment shows: a link or photos.
    ///
    /// An unknown value in a response is a decoding error at the `type` field, never a crash.
    public enum MomentType: String, Codable, Sendable, Hashable, CaseIterable {
        case url = "URL"
        case photos = "PHOTOS"
    }
}

/// What a moment shows (``Moment/MomentType``), by its former top-level name.
@available(*, deprecated, renamed: "Moment.MomentType")
public typealias MomentType = Moment.MomentType
