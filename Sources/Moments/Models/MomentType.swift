/// What a moment shows: a link or photos.
///
/// An unknown value in a response is a decoding error at the `type` field, never a crash.
public enum MomentType: String, Codable, Sendable, Hashable, CaseIterable {
    case url = "URL"
    case photos = "PHOTOS"
}
