import Foundation
import Moments

/// Renders timelines for people, and as JSON for programs.
enum TimelineFormatter {
    static func text(_ details: MomentsDetails) -> [String] {
        var lines = ["\(details.userDetails.name) (user \(details.userDetails.id)): \(details.moments.count) moment\(details.moments.count == 1 ? "" : "s")"]
        for moment in details.moments { lines.append(contentsOf: text(moment)) }
        return lines
    }

    static func text(_ moment: Moment) -> [String] {
        let title = moment.title.map { "“\($0)”" } ?? "(untitled)"
        var first = "  \(heart(moment)) [\(moment.id)] \(title) by \(moment.userDetails.name)"
        if let date = moment.createdAt { first += " · " + dateFormatter.string(from: date) }
        var second = "      "
        var parts: [String] = []
        if let url = moment.url { parts.append(url) }
        parts.append("\(moment.photos.count) photo\(moment.photos.count == 1 ? "" : "s")")
        parts.append(likes(moment))
        second += parts.joined(separator: " · ")
        return [first, second]
    }

    static func heart(_ moment: Moment) -> String {
        switch moment.isLiked {
        case true?: "♥"
        case false?: "♡"
        case nil: "·"
        }
    }

    static func likes(_ moment: Moment) -> String {
        guard let likes = moment.likes else { return "likes not fetched" }
        if likes.isEmpty { return "no likes" }
        return "\(likes.count) like\(likes.count == 1 ? "" : "s") (users \(likes.map(\.id).joined(separator: ", ")))"
    }

    static func json(_ value: some Encodable, pretty: Bool = true) -> String {
        let encoder = JSONEncoder()
        encoder.outputFormatting = pretty ? [.prettyPrinted, .sortedKeys, .withoutEscapingSlashes] : [.sortedKeys, .withoutEscapingSlashes]
        guard let data = try? encoder.encode(value) else { return "{}" }
        return String(decoding: data, as: UTF8.self)
    }

    /// What changed between two versions of a timeline, one line each.
    static func changes(from old: MomentsDetails, to new: MomentsDetails) -> [String] {
        var lines: [String] = []
        let oldIDs = Set(old.moments.map(\.id))
        let newIDs = Set(new.moments.map(\.id))
        for moment in new.moments where !oldIDs.contains(moment.id) { lines.append("+ new moment [\(moment.id)] \(moment.title ?? "(untitled)")") }
        for moment in old.moments where !newIDs.contains(moment.id) { lines.append("- moment [\(moment.id)] is gone") }
        for moment in new.moments {
            guard let before = old.moment(withID: moment.id), before != moment else { continue }
            lines.append("~ [\(moment.id)] \(heart(moment)) \(likes(moment))")
        }
        return lines
    }

    private static let dateFormatter: DateFormatter = {
        let formatter = DateFormatter()
        formatter.locale = Locale(identifier: "en_US_POSIX")
        formatter.timeZone = TimeZone(identifier: "UTC")
        formatter.dateFormat = "yyyy-MM-dd HH:mm 'UTC'"
        return formatter
    }()
}
