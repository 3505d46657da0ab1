import Foundation

/// What one committed save announces with `NOTIFY`: who wrote it and which rows.
///
/// PostgreSQL limits a payload to 8,000 bytes; an announcement too long for that says
/// only "everything", and receivers resynchronise what they hold.
struct ChangeAnnouncement: Codable, Hashable {
    /// The writing instance's id.
    var origin: String
    var momentIDs: [String]
    var userIDs: [String]
    /// Too many rows to list: resynchronise.
    var everything = false

    static let maximumPayload = 7_900

    var isEmpty: Bool { momentIDs.isEmpty && userIDs.isEmpty && !everything }

    private enum CodingKeys: String, CodingKey {
        case origin = "o", momentIDs = "m", userIDs = "u", everything = "all"
    }

    var payload: String {
        let text = (try? JSONEncoder().encode(self)).map { String(decoding: $0, as: UTF8.self) }
        if let text, text.utf8.count <= Self.maximumPayload { return text }
        return #"{"o":"\#(origin)","m":[],"u":[],"all":true}"#
    }

    init(origin: String, momentIDs: [String], userIDs: [String], everything: Bool = false) {
        self.origin = origin
        self.momentIDs = momentIDs
        self.userIDs = userIDs
        self.everything = everything
    }

    /// The announcement in `payload`; `nil` for a payload of another writer.
    init?(payload: String) {
        guard let decoded = try? JSONDecoder().decode(ChangeAnnouncement.self, from: Data(payload.utf8)) else { return nil }
        self = decoded
    }
}
