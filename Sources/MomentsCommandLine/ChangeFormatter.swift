import Foundation
import Moments

/// One line of JSON per ``MomentsChange`` (JSON Lines), for `moments watch --json`.
///
/// Every object has `sequence` and `type` (`timeline`, `moment`, `refreshStarted`, `refreshFinished`,
/// `refreshFailed` or `gap`), then what that type carries:
/// ```json
/// {"sequence":7,"type":"moment","phase":"confirmed","users":["0","1"],"likedBy":"0","moment":{…}}
/// ```
/// A moment change names every user whose timeline holds the moment; its `moment` has
/// `isLiked` as the watched user sees it (or `null` with `--all`).
enum ChangeFormatter {
    private struct Line: Encodable {
        let sequence: UInt64
        var type: String
        var user: String?
        var users: [String]?
        var reason: String?
        var momentIDs: [String]?
        var inserted: [Moment]?
        var removed: [String]?
        var changed: [String]?
        var phase: String?
        var likedBy: String?
        var moment: Moment?
        var error: String?
        var missed: [UInt64]?
    }

    /// `change` as one line of JSON; `viewer` sets `isLiked` as that user sees it.
    static func json(_ change: MomentsChange, viewer: String?) -> String {
        var line = Line(sequence: change.sequence, type: "gap")
        switch change.kind {
        case .timeline(let timeline):
            line.type = "timeline"
            line.user = timeline.userID
            line.reason = timeline.reason.rawValue
            line.momentIDs = timeline.momentIDs
            line.inserted = timeline.inserted
            line.removed = timeline.removed
            line.changed = timeline.changed
        case .moment(let update):
            line.type = "moment"
            line.users = update.holders.sorted()
            line.phase = update.phase.rawValue
            line.likedBy = update.likedBy
            line.moment = viewer.map { update.moment(for: $0) } ?? update.moment
        case .refreshStarted(let userID):
            line.type = "refreshStarted"
            line.user = userID
        case .refreshFinished(let userID):
            line.type = "refreshFinished"
            line.user = userID
        case .refreshFailed(let userID, let error):
            line.type = "refreshFailed"
            line.user = userID
            line.error = MomentsCommandLine.describe(error)
        case .gap(let missed):
            line.type = "gap"
            line.missed = [missed.lowerBound, missed.upperBound]
        case .sharedChangesInterrupted:
            line.type = "sharedChangesInterrupted"
        }
        return TimelineFormatter.json(line, pretty: false)
    }
}

extension MomentsChange {
    var isGap: Bool {
        switch kind {
        case .gap, .sharedChangesInterrupted: true
        default: false
        }
    }
}
