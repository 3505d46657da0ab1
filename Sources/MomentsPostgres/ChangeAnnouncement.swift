import Foundation

/// What one committed save announces with `NOTIFY`: who wrote it and which rows.
///
/// PostgreSQL limits a payload to 8,000 bytes. An announcement of rows too long for that
/// says only "everything", and receivers resynchronise what they hold; contested
/// moments and timelines (which the writer must hear of too) go in announcements of
/// their own, split to fit.
struct ChangeAnnouncement: Codable, Hashable {
    /// The writing instance's id.
    var origin: String
    var momentIDs: [String]
    var userIDs: [String]
    /// Moments whose save replaced a different value of unknown order: announced to
    /// every instance, the writer included.
    var contested: [String]
    /// Timelines whose save replaced a different value of unknown order: announced to
    /// every instance, the writer included.
    var contestedUsers: [String]
    /// Timelines removed (and with them the moments no other timeline held).
    var removedUsers: [String]
    /// Every timeline and moment was removed.
    var removedEverything: Bool
    /// Too many rows to list: resynchronise.
    var everything: Bool

    static let maximumPayload = 7_900

    var isEmpty: Bool {
        momentIDs.isEmpty && userIDs.isEmpty && contested.isEmpty && contestedUsers.isEmpty && removedUsers.isEmpty && !removedEverything && !everything
    }

    /// Whether the writer must hear of it too.
    var isContest: Bool { !contested.isEmpty || !contestedUsers.isEmpty }

    private enum CodingKeys: String, CodingKey {
        case origin = "o", momentIDs = "m", userIDs = "u", contested = "c", contestedUsers = "cu", removedUsers = "r", removedEverything = "ra"
        case everything = "all"
    }

    init(
        origin: String, momentIDs: [String], userIDs: [String], contested: [String] = [], contestedUsers: [String] = [],
        removedUsers: [String] = [], removedEverything: Bool = false, everything: Bool = false
    ) {
        self.origin = origin
        self.momentIDs = momentIDs
        self.userIDs = userIDs
        self.contested = contested
        self.contestedUsers = contestedUsers
        self.removedUsers = removedUsers
        self.removedEverything = removedEverything
        self.everything = everything
    }

    init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        origin = try container.decode(String.self, forKey: .origin)
        momentIDs = try container.decodeIfPresent([String].self, forKey: .momentIDs) ?? []
        userIDs = try container.decodeIfPresent([String].self, forKey: .userIDs) ?? []
        contested = try container.decodeIfPresent([String].self, forKey: .contested) ?? []
        contestedUsers = try container.decodeIfPresent([String].self, forKey: .contestedUsers) ?? []
        removedUsers = try container.decodeIfPresent([String].self, forKey: .removedUsers) ?? []
        removedEverything = try container.decodeIfPresent(Bool.self, forKey: .removedEverything) ?? false
        everything = try container.decodeIfPresent(Bool.self, forKey: .everything) ?? false
    }

    /// The announcement in `payload`; `nil` for a payload of another writer.
    init?(payload: String) {
        guard let decoded = try? JSONDecoder().decode(ChangeAnnouncement.self, from: Data(payload.utf8)) else { return nil }
        self = decoded
    }

    /// The payloads to send: the rows (or "everything"), then the contested moments in
    /// as many payloads as they need.
    var payloads: [String] {
        var payloads: [String] = []
        let rows = ChangeAnnouncement(
            origin: origin, momentIDs: momentIDs, userIDs: userIDs, removedUsers: removedUsers, removedEverything: removedEverything, everything: everything
        )
        if !rows.isEmpty {
            payloads.append(rows.encoded.flatMap { $0.utf8.count <= Self.maximumPayload ? $0 : nil }
                ?? ChangeAnnouncement(origin: origin, momentIDs: [], userIDs: [], everything: true).encoded ?? "")
        }
        // Contested moments, then contested timelines, as many to a payload as fit.
        for (ids, isTimeline) in [(contested, false), (contestedUsers, true)] {
            func announcement(_ chunk: [String]) -> ChangeAnnouncement {
                isTimeline
                    ? ChangeAnnouncement(origin: origin, momentIDs: [], userIDs: chunk, contestedUsers: chunk)
                    : ChangeAnnouncement(origin: origin, momentIDs: chunk, userIDs: [], contested: chunk)
            }
            var chunk: [String] = []
            for id in ids {
                if (announcement([id]).encoded?.utf8.count ?? .max) > Self.maximumPayload {
                    // An id too long for any payload: every instance, the writer too,
                    // resynchronises everything it holds rather than miss the contest.
                    payloads.append(ChangeAnnouncement(origin: "", momentIDs: [], userIDs: [], everything: true).encoded ?? "")
                } else if (announcement(chunk + [id]).encoded?.utf8.count ?? .max) > Self.maximumPayload, !chunk.isEmpty {
                    payloads.append(announcement(chunk).encoded ?? "")
                    chunk = [id]
                } else {
                    chunk.append(id)
                }
            }
            if !chunk.isEmpty { payloads.append(announcement(chunk).encoded ?? "") }
        }
        return payloads.filter { !$0.isEmpty && $0.utf8.count <= Self.maximumPayload }
    }

    private var encoded: String? {
        (try? JSONEncoder().encode(self)).map { String(decoding: $0, as: UTF8.self) }
    }
}
