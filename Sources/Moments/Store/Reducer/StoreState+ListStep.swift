/// The list step: the timeline's register (its owner, its list and the owner's
/// `isLiked` of each moment, what the server answered for this viewer) moved forward
/// under the ordering rule of ``Evidence``.
extension StoreState {
    /// Adds the timeline an answer brings for a user the store holds none for.
    func addTimeline(_ details: MomentsDetails, for userID: String, evidence: Evidence, policy: AnswerPolicy, members: [MomentRecord], into applied: inout Applied) {
        let entries = details.moments.map { StoredTimeline.Entry(momentID: $0.id, isLiked: $0.isLiked) }
        timelines[userID] = TimelineRecord(userDetails: details.userDetails, entries: entries, members: members, evidence: evidence, lastUse: useClock)
        for record in members { record.holders.insert(userID) }
        applied.timeline = TimelineChange(
            userID: userID, reason: .loaded, userDetails: details.userDetails, momentIDs: entries.map(\.momentID),
            inserted: zip(entries, members).map { view($1, isLiked: $0.isLiked, by: userID) },
            removed: [], changed: applied.changedMoments
        )
        if policy.persists { applied.batch.timelines[userID] = StoredTimeline(userDetails: details.userDetails, entries: entries) }
    }

    /// Applies an answer to the timeline the store holds (`newMembers`: the records of
    /// a new list, `nil` when the answer lists the same moments):
    /// - an answer certainly newer than the timeline replaces its register: the owner
    ///   and list, or (the same list) the `isLiked`s that differ;
    /// - one of unknown order leaves the register as it is, widens its age to cover the
    ///   answer, and asks the server to settle a difference;
    /// - one certainly older changes nothing;
    /// - whatever the order, the owner's `isLiked` of a moment they liked stays as the
    ///   answer to that like gave it, until an answer certainly computed after that one
    ///   says otherwise (the like's answer was computed after the like took effect, so
    ///   it is the authority for that register against every answer not certainly newer).
    func applyList(
        _ details: MomentsDetails, to timeline: TimelineRecord, for userID: String, evidence: Evidence, policy: AnswerPolicy,
        newMembers: [MomentRecord]?, into applied: inout Applied
    ) {
        timeline.lastUse = useClock
        let moments = details.moments
        let sameOwnerAndList = newMembers == nil && timeline.userDetails == details.userDetails
        var differingIsLiked = makeIndices()
        defer { recycle(indices: differingIsLiked) }
        if newMembers == nil {
            for index in moments.indices where timeline.entries[index].isLiked != moments[index].isLiked { differingIsLiked.append(index) }
        }
        let sameTimeline = sameOwnerAndList && differingIsLiked.isEmpty
        // Whether the timeline now holds the answer's owner, list and `isLiked`s.
        var holdsAnswer = sameTimeline
        if evidence.isCertainlyNewer(than: timeline.evidence) {
            timeline.evidence = evidence
            holdsAnswer = true
            if sameOwnerAndList {
                for index in differingIsLiked {
                    timeline.setIsLiked(moments[index].isLiked, at: index)
                    applied.changedEntries.append(moments[index].id)
                }
            } else {
                replaceRegister(of: timeline, with: details, for: userID, newMembers: newMembers, into: &applied)
            }
            if !sameTimeline, policy.persists { applied.batch.timelines[userID] = timeline.stored }
        } else if !evidence.isCertainlyOlder(than: timeline.evidence) {
            // An answer of unknown order: the value stands (until the server settles a
            // disagreement), and its age now covers the answer, whether it agreed or not,
            // so a later answer is taken as newer only if it was sent after both.
            if evidence.sent != nil { timeline.evidence = timeline.evidence.covering(evidence) }
            if !sameTimeline, policy.settles { applied.needsConvergence = true }
        }
        if policy.likedMomentID != nil || !timeline.isLikedPins.isEmpty {
            keepLikersIsLiked(of: timeline, answer: details, for: userID, evidence: evidence, policy: policy, into: &applied)
        }
        noteAgreement(of: timeline, for: userID, holdsAnswer: holdsAnswer, policy: policy, into: &applied)
    }

    /// Pins the owner's `isLiked` of the moment their like's answer answers, and keeps
    /// every pinned `isLiked` against answers not certainly computed after its pin; an
    /// answer certainly newer than a pin, or a list without its moment, ends it.
    private func keepLikersIsLiked(
        of timeline: TimelineRecord, answer details: MomentsDetails, for userID: String, evidence: Evidence, policy: AnswerPolicy,
        into applied: inout Applied
    ) {
        if let liked = policy.likedMomentID, let answered = details.moment(withID: liked),
           timeline.isLikedPins[liked].map({ !$0.evidence.isCertainlyNewer(than: evidence) }) ?? true {
            timeline.isLikedPins[liked] = IsLikedPin(isLiked: answered.isLiked, evidence: evidence)
        }
        var changed = false
        for (momentID, pin) in timeline.isLikedPins {
            guard let index = timeline.position(of: momentID),
                  momentID == policy.likedMomentID || !evidence.isCertainlyNewer(than: pin.evidence) else {
                timeline.isLikedPins[momentID] = nil
                continue
            }
            guard timeline.entries[index].isLiked != pin.isLiked else { continue }
            timeline.setIsLiked(pin.isLiked, at: index)
            if !applied.changedEntries.contains(momentID) { applied.changedEntries.append(momentID) }
            changed = true
        }
        if changed, policy.persists { applied.batch.timelines[userID] = timeline.stored }
    }

    /// Replaces the timeline's owner and list with the answer's, noting the timeline's
    /// change and the kept moments whose `isLiked` changed.
    private func replaceRegister(
        of timeline: TimelineRecord, with details: MomentsDetails, for userID: String, newMembers: [MomentRecord]?, into applied: inout Applied
    ) {
        let oldEntries = timeline.entries
        let oldMembers = timeline.members
        timeline.userDetails = details.userDetails
        timeline.replaceList(with: details.moments.map { StoredTimeline.Entry(momentID: $0.id, isLiked: $0.isLiked) }, members: newMembers)
        let change = replaced(oldEntries, oldMembers, with: timeline, for: userID, changed: applied.changedMoments)
        applied.timeline = change.timeline
        applied.changedEntries = change.isLikedChanged
    }

    /// Where storage is shared with other instances, notes whether the timeline agrees
    /// with the answer: another instance's value that this store does not hold makes
    /// the timeline divergent (and asks the server); a server's answer the timeline now
    /// holds is written even if nothing changed here, when the timeline was divergent,
    /// or when it answers this store's like of a register other instances also write.
    private func noteAgreement(of timeline: TimelineRecord, for userID: String, holdsAnswer: Bool, policy: AnswerPolicy, into applied: inout Applied) {
        if policy.isShared {
            if holdsAnswer {
                divergentTimelines.remove(userID)
            } else {
                divergentTimelines.insert(userID)
                applied.needsConvergence = true
            }
        } else if policy.persists, policy.isServer, holdsAnswer, !divergentTimelines.isEmpty, divergentTimelines.remove(userID) != nil {
            applied.batch.timelines[userID] = timeline.stored
        } else if policy.persists, !likesAreExclusive, policy.likedMomentID != nil, holdsAnswer {
            applied.batch.timelines[userID] = timeline.stored
        }
    }

    /// The change from `oldEntries` (with their records) to `new`'s list, with the
    /// holders updated, and the kept moments whose `isLiked` changed. Membership (and a
    /// kept moment's old `isLiked`) is found by marking records, without hashing ids.
    private func replaced(
        _ oldEntries: [StoredTimeline.Entry], _ oldMembers: [MomentRecord], with new: TimelineRecord, for userID: String, changed: [String]
    ) -> (timeline: TimelineChange, isLikedChanged: [String]) {
        // Stamps: in the old list with `isLiked` nil, false or true; in both lists.
        markClock &+= 4
        let inOld = markClock - 3
        let inBoth = markClock
        func stamp(_ isLiked: Bool?) -> UInt64 { inOld + (isLiked.map { $0 ? 2 : 1 } ?? 0) }
        for (entry, record) in zip(oldEntries, oldMembers) { record.mark = stamp(entry.isLiked) }
        var inserted: [Moment] = []
        var isLikedChanged: [String] = []
        for (entry, record) in zip(new.entries, new.members) {
            if record.mark >= inOld, record.mark < inBoth {
                if record.mark != stamp(entry.isLiked) { isLikedChanged.append(entry.momentID) }
                record.mark = inBoth
            } else {
                record.holders.insert(userID)
                inserted.append(view(record, isLiked: entry.isLiked, by: userID))
            }
        }
        var removed: [String] = []
        for (entry, record) in zip(oldEntries, oldMembers) where record.mark != inBoth {
            removed.append(entry.momentID)
            release(entry.momentID, from: userID)
        }
        let changedNow = Set(changed)
        let kept = changed.filter { records[$0]?.mark == inBoth } + isLikedChanged.filter { !changedNow.contains($0) }
        let timeline = TimelineChange(
            userID: userID, reason: .replaced, userDetails: new.userDetails, momentIDs: new.entries.map(\.momentID),
            inserted: inserted, removed: removed, changed: kept
        )
        return (timeline, isLikedChanged)
    }
}
