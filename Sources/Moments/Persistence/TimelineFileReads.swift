import Foundation

/// The files one save has read, so each is read and decoded once.
struct TimelineFileReads {
    private var files: [String: MomentsDetails?] = [:]
    private var moments: [String: [String: Moment]] = [:]

    mutating func file(of userID: String, using read: (String) throws -> MomentsDetails?) throws -> MomentsDetails? {
        if let known = files[userID] { return known }
        let details = try read(userID)
        files[userID] = .some(details)
        return details
    }

    mutating func moment(_ id: String, inFileOf userID: String, using read: (String) throws -> MomentsDetails?) throws -> Moment? {
        if moments[userID] == nil {
            let details = try file(of: userID, using: read)
            moments[userID] = Dictionary((details?.moments ?? []).map { ($0.id, $0) }, uniquingKeysWith: { first, _ in first })
        }
        return moments[userID]?[id]
    }
}
