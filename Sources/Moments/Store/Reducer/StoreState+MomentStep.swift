/// The records of an answer's moments, in the answer's order.
enum AnswerRecords {
    /// The answer lists the timeline's own moments in the same order: its records.
    case sameList([MomentRecord])
    /// Another list: each moment's record, or `nil` where the store holds none.
    case newList([MomentRecord?])

    var isSameList: Bool {
        if case .sameList = self { return true }
        return false
    }

    /// The record of the moment at `index`, if the store holds one.
    subscript(index: Int) -> MomentRecord? {
        switch self {
        case .sameList(let records): records[index]
        case .newList(let records): records[index]
        }
    }
}

/// What the moment step needs of one answer, fixed for all its moments.
struct MomentStep {
    /// The timeline's owner: the answer's viewer.
    let userID: String
    /// The answer's age.
    let evidence: Evidence
    /// Each moment's own age, where the answer is not one snapshot.
    let momentEvidence: [String: Evidence]?
    let policy: AnswerPolicy
    /// For a like's answer, the owner's register of the liked moment.
    let pin: LikePin?

    /// The age of the moment `id` in this answer.
    func evidence(of id: String) -> Evidence {
        momentEvidence.map { $0[id] ?? .ofUnknownAge(receivedAt: evidence.received) } ?? evidence
    }

    /// The pin for the moment `id`: the answer's pin if `id` is the liked moment.
    func pin(of id: String) -> LikePin? {
        policy.likedMomentID != nil && id == policy.likedMomentID ? pin : nil
    }
}

/// The moment step: each moment of an answer merged into its record under the ordering
/// rule (``MomentRecord/merge(_:evidence:pin:likesAreExclusive:isLikeInFlight:)``).
extension StoreState {
    /// Applies each of `moments` to its record (made for a moment the store does not
    /// hold), noting in `applied` what changed, what to persist and what to settle.
    /// Returns the records in the answer's order for a new list (empty for the same
    /// list, whose records the timeline has), and the ids of the records made.
    ///
    /// The fast path: when the policy lets the answer skim, a moment its record holds
    /// unchanged only advances the record's evidence (with the same list, all such
    /// moments are skimmed first, in one tight pass; the liked moment never is).
    func applyMoments(
        _ moments: [Moment], records: AnswerRecords, step: MomentStep, into applied: inout Applied, isLikeInFlight: (LikeKey) -> Bool
    ) -> (members: [MomentRecord], created: [String]) {
        let skims = step.policy.skimsUnchanged
        let likedID = step.policy.likedMomentID
        var members: [MomentRecord] = []
        var created: [String] = []
        var unskimmed: [Int]?
        switch records {
        case .sameList(let own): if skims { unskimmed = skimUnchanged(moments, records: own, evidence: step.evidence, sparing: likedID) }
        case .newList: members.reserveCapacity(moments.count)
        }
        defer { if let unskimmed { recycle(indices: unskimmed) } }
        for position in 0..<(unskimmed?.count ?? moments.count) {
            let index = unskimmed?[position] ?? position
            let moment = moments[index]
            let record = records[index]
            if case .newList = records, skims, likedID == nil || moment.id != likedID, let record,
               record.absorbIfUnchanged(moment, evidence: step.evidence) {
                members.append(record)
                continue
            }
            guard let record else {
                let made = makeRecord(for: moment, step: step, into: &applied)
                members.append(made)
                created.append(moment.id)
                continue
            }
            if case .newList = records { members.append(record) }
            merge(moment, at: index, into: record, step: step, into: &applied, isLikeInFlight: isLikeInFlight)
        }
        return (members, created)
    }

    /// A record for a moment the store does not hold, with the answer's value and pin.
    private func makeRecord(for moment: Moment, step: MomentStep, into applied: inout Applied) -> MomentRecord {
        let record = MomentRecord(value: moment.sharedValue(keepingLikes: nil), evidence: step.evidence(of: moment.id))
        if let pin = step.pin(of: moment.id) { record.pins[step.userID] = pin }
        records[moment.id] = record
        if step.policy.persists { applied.batch.moments[moment.id] = record.value }
        return record
    }

    /// Merges `moment` (at `index` in the answer) into the record the store holds for
    /// it, and notes what the merge changed or left for the server to settle:
    /// - another instance's value is noted against this store's (divergent, contested);
    /// - an answer the server settles asks for a refetch when ambiguous, and defers (or,
    ///   with other writers, contests) registers a like in flight explains;
    /// - a server's answer that changes nothing here is still written where shared
    ///   storage may hold another value.
    private func merge(
        _ moment: Moment, at index: Int, into record: MomentRecord, step: MomentStep, into applied: inout Applied,
        isLikeInFlight: (LikeKey) -> Bool
    ) {
        let id = moment.id
        let pin = step.pin(of: id)
        // The liker's view of the moment their like mutated, while their like is still
        // shown on top: the like's end emits it, if this answer changed it.
        let likerViewBefore = pin != nil ? record.intent(of: step.userID).map { LikerView(value: record.value, isLiked: nil, intent: $0) } : nil
        let merge = record.merge(moment, evidence: step.evidence(of: id), pin: pin, likesAreExclusive: likesAreExclusive) { liker in
            isLikeInFlight(LikeKey(userID: liker, momentID: id))
        }
        if merge.changed {
            if let likerViewBefore, record.likerView(isLiked: nil, by: step.userID) != likerViewBefore { applied.likersViewChanged = true }
            applied.changedMoments.append(id)
            applied.changedPositions.append(index)
            if step.policy.persists { applied.batch.moments[id] = record.value }
        }
        if step.policy.isShared {
            let noted = noteShared(moment)
            applied.needsConvergence = applied.needsConvergence || merge.isAmbiguous || noted.settleNow
            applied.contestedLikers += noted.contested
        } else if step.policy.settles {
            if merge.isAmbiguous { applied.needsConvergence = true }
            if !merge.deferredLikers.isEmpty {
                // With other writers, a difference a like in flight would explain may be
                // another instance's change of the same like: contested, not deferred.
                let keys = merge.deferredLikers.map { LikeKey(userID: $0, momentID: id) }
                if likesAreExclusive { applied.deferredLikers += keys } else { applied.contestedLikers += keys }
            }
        }
        if step.policy.writesAgreement, !merge.changed, agreesWithDivergent(moment) || confirmsSharedLike(moment, pin: pin) {
            applied.batch.moments[id] = record.value
        }
    }

    /// Absorbs each of `moments` that its record (`records`, in the same order) holds
    /// unchanged, as ``MomentRecord/absorbIfUnchanged(_:evidence:)`` does, but
    /// `pinnedID`'s; returns the indices of the others.
    ///
    /// Reads both lists in place, so a moment whose content is its record's own box (an
    /// answer repeating what the store holds, or served from memory) is settled without
    /// retaining the record or the box; other moments compare field by field.
    private func skimUnchanged(_ moments: [Moment], records: [MomentRecord], evidence: Evidence, sparing pinnedID: String?) -> [Int] {
        var others = makeIndices()
        moments.withUnsafeBufferPointer { moments in
            records.withUnsafeBufferPointer { records in
                for index in moments.indices {
                    let absorbed = (pinnedID == nil || moments[index].id != pinnedID)
                        && records[index].absorbIfUnchanged(moments[index], evidence: evidence)
                    if !absorbed { others.append(index) }
                }
            }
        }
        return others
    }

    /// Whether `moment` is the moment a like of this store just confirmed, in storage
    /// shared with other instances: written even when nothing changed here, since
    /// another instance may have written a different value of the same register.
    private func confirmsSharedLike(_ moment: Moment, pin: LikePin?) -> Bool {
        guard !likesAreExclusive, let pin, let record = records[moment.id] else { return false }
        return record.value.agrees(with: pin)
    }

    /// Whether `moment` (a server's answer, merged) settles a difference with shared
    /// storage: the moment was divergent, and this store now holds the server's value.
    private func agreesWithDivergent(_ moment: Moment) -> Bool {
        guard !divergentMoments.isEmpty, divergentMoments.contains(moment.id), let record = records[moment.id],
              record.value == moment.sharedValue(keepingLikes: record.value.likes) else { return false }
        divergentMoments.remove(moment.id)
        return true
    }
}
