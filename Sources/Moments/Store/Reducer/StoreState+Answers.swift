import Foundation
/// Answers: the ordering rule applied to a timeline's list and to each of its moments.
///
/// ``apply(_:for:evidence:source:momentEvidence:isLikeInFlight:)`` reads top to bottom:
/// the answer's policy (``AnswerPolicy``: what its source lets it do), its moments'
/// records (``AnswerRecords``), the moment step (`StoreState+MomentStep.swift`: each
/// moment's value, with a fast path for the moments the answer does not change), the
/// list step (`StoreState+ListStep.swift`: the timeline's owner, list and `isLiked`s),
/// and the release of records no timeline took.
extension StoreState {
    /// Applies `details`, an answer for `userID`'s timeline, under the ordering rule of
    /// ``MomentRecord/merge(_:evidence:pin:likesAreExclusive:isLikeInFlight:)``, applied to each moment and
    /// (with the owner and order) to the timeline's list.
    ///
    /// `momentEvidence` gives a moment an age of its own where the answer is not one
    /// snapshot (a timeline another instance committed lists moment rows written at
    /// other times); by default each moment has the answer's.
    ///
    /// It does no I/O and touches nothing outside this state: what to persist, emit and
    /// settle is returned in ``Applied``.
    ///
    /// - Throws: ``MomentsStoreError`` for an answer listing a moment twice; nothing is applied.
    func apply(
        _ details: MomentsDetails, for userID: String, evidence: Evidence, source: Source,
        momentEvidence: [String: Evidence]? = nil, isLikeInFlight: (LikeKey) -> Bool
    ) throws -> Applied {
        defer { version &+= 1 }
        let policy = AnswerPolicy(source: source, hasMomentAges: momentEvidence != nil,
                                  hasDivergentMoments: !divergentMoments.isEmpty, likesAreExclusive: likesAreExclusive)
        let existing = timeline(userID)
        let known = try answerRecords(of: details.moments, for: userID, listedBefore: existing)
        var applied = makeApplied()
        let step = MomentStep(userID: userID, evidence: evidence, momentEvidence: momentEvidence, policy: policy,
                              pin: policy.likedMomentID.flatMap { likePin(on: $0, in: details, for: userID, evidence: evidence) })
        let (members, created) = applyMoments(details.moments, records: known, step: step, into: &applied, isLikeInFlight: isLikeInFlight)
        useClock += 1
        if let existing {
            applyList(details, to: existing, for: userID, evidence: evidence, policy: policy, newMembers: known.isSameList ? nil : members, into: &applied)
        } else {
            addTimeline(details, for: userID, evidence: evidence, policy: policy, members: members, into: &applied)
        }
        // Records made for moments this timeline did not take are not persisted.
        for id in created where records[id]?.holders.isEmpty == true {
            applied.batch.moments[id] = nil
            retireIfUnused(id)
        }
        return applied
    }

    /// The records of an answer's moments, in order: the timeline's own when the answer
    /// lists the same ids in the same order (a stored timeline lists each id once, so
    /// no other check is needed), else each looked up once and checked for an id listed
    /// twice.
    private func answerRecords(of moments: [Moment], for userID: String, listedBefore existing: TimelineRecord?) throws -> AnswerRecords {
        if let existing, existing.hasSameList(as: moments) { return .sameList(existing.members) }
        return .newList(try lookUpRecords(of: moments, for: userID, listedBefore: existing))
    }

    /// The pin of a like's answer: the liker's register of the liked moment as the
    /// answer gives it (from `likes` where listed, else `isLiked`).
    private func likePin(on momentID: String, in details: MomentsDetails, for userID: String, evidence: Evidence) -> LikePin? {
        guard let liked = details.moment(withID: momentID) else { return nil }
        let isLiked = liked.likes.map { likes in likes.contains { $0.id == userID } } ?? liked.isLiked ?? false
        let avatar = liked.likes?.first { $0.id == userID }?.avatar ?? details.userDetails.avatar
        return LikePin(isLiked: isLiked, liker: Moment.LikedUser(id: userID, avatar: avatar),
                       sent: evidence.sent ?? evidence.received, received: evidence.received)
    }

    /// Adds the answer to `userID`'s like of `momentID` to `batch` as a
    /// ``LikeConfirmation``, with the moment's confirmed value (written even when the
    /// answer changed nothing), so storage shared between instances keeps the liker's
    /// register as the answer gave it against any write not certainly computed after it.
    func addLikeConfirmation(
        of momentID: String, by userID: String, in details: MomentsDetails, evidence: Evidence,
        to batch: inout PersistenceBatch, reading: ClockReading
    ) {
        guard let pin = likePin(on: momentID, in: details, for: userID, evidence: evidence),
              let record = records[momentID] else { return }
        let interval = Evidence(sent: pin.sent, received: pin.received).confirmationInterval(reading: reading)
        batch.likeConfirmations.append(LikeConfirmation(momentID: momentID, liker: pin.liker, isLiked: pin.isLiked, confirmedWithin: interval))
        if batch.moments[momentID] == nil { batch.moments[momentID] = record.value }
    }

    /// Each moment's record (`nil` for an id with none yet), in order.
    ///
    /// A new list mostly keeps the old one's moments in the old order (a moment added at
    /// the top, one dropped at the bottom): a moment found where the walk through
    /// `previous`'s list expects it takes its record from there, without hashing its id;
    /// the others are looked up.
    ///
    /// - Throws: ``MomentsStoreError`` if `moments` lists an id twice: a record met
    ///   twice carries this call's ``MomentRecord/mark``; ids without a record are
    ///   checked in a set of their own.
    private func lookUpRecords(of moments: [Moment], for userID: String, listedBefore previous: TimelineRecord?) throws -> [MomentRecord?] {
        markClock &+= 1
        let stamp = markClock
        var found: [MomentRecord?] = []
        found.reserveCapacity(moments.count)
        var unknown = Set<String>()
        let oldEntries = previous?.entries ?? []
        let oldMembers = previous?.members ?? []
        // The old list's next moment, if the new list goes on as the old one did.
        var next = 0
        for moment in moments {
            let record: MomentRecord?
            if next < oldEntries.count, oldEntries[next].momentID == moment.id {
                record = oldMembers[next]
                next += 1
            } else {
                record = records[moment.id]
                // The old list's next moment was dropped: go on after this one.
                if let record, next + 1 < oldMembers.count, oldMembers[next + 1] === record { next += 2 }
            }
            if let record {
                guard record.mark != stamp else { throw MomentsStoreError(code: .duplicateMomentID, userID: userID, momentID: moment.id) }
                record.mark = stamp
            } else if !unknown.insert(moment.id).inserted {
                throw MomentsStoreError(code: .duplicateMomentID, userID: userID, momentID: moment.id)
            }
            found.append(record)
        }
        return found
    }

    /// When the server may have computed what `batch` holds, as written after an answer
    /// with `evidence`: the answer's interval widened to cover every moment and timeline
    /// written. A moment written after an answer may keep registers older than the
    /// answer (pins, or a value the answer could not replace); another instance reading
    /// the batch must not take them for the answer's age.
    func confirmation(of batch: PersistenceBatch, answer evidence: Evidence, reading: ClockReading) -> ConfirmationInterval {
        var confirmation = evidence
        for id in batch.moments.keys {
            if let record = records[id] { confirmation = confirmation.covering(record.confirmation) }
        }
        for userID in batch.timelines.keys {
            if let timeline = timelines[userID] { confirmation = confirmation.covering(timeline.evidence) }
        }
        return confirmation.confirmationInterval(reading: reading)
    }

    /// Merges `moment`, confirmed by another instance, into the record this store holds
    /// for it (if any) under the ordering rule; nothing is persisted.
    func applyShared(_ moment: Moment, evidence: Evidence, isLikeInFlight: (LikeKey) -> Bool) -> Applied {
        var applied = Applied()
        guard let record = records[moment.id] else { return applied }
        let merge = record.merge(moment, evidence: evidence, pin: nil, likesAreExclusive: likesAreExclusive) { liker in
            isLikeInFlight(LikeKey(userID: liker, momentID: moment.id))
        }
        if merge.changed {
            version &+= 1
            applied.changedMoments.append(moment.id)
        }
        let noted = noteShared(moment)
        applied.needsConvergence = merge.isAmbiguous || noted.settleNow
        applied.contestedLikers = noted.contested
        return applied
    }

    /// Notes how `moment`, as another instance committed it (already merged), stands
    /// against this store: whether the server must settle a difference now, and which
    /// likes in flight here it contests.
    ///
    /// A value this store declined (older, of unknown order, or contradicting a like
    /// this store confirmed: another instance may have changed the same like) is
    /// settled by a refetch, whose answer is then written even if it changes nothing
    /// here. A value that disagrees with a like in flight here contests it, whether or
    /// not the store took the value: the server may have applied the two in either
    /// order, so the register is refetched when that like's chain ends.
    func noteShared(_ moment: Moment) -> (settleNow: Bool, contested: [LikeKey]) {
        guard let record = records[moment.id] else { return (false, []) }
        var contested: [LikeKey] = []
        if let likes = moment.likes {
            for intent in record.intents where likes.contains(where: { $0.id == intent.liker.id }) != intent.isLiked {
                contested.append(LikeKey(userID: intent.liker.id, momentID: moment.id))
            }
        }
        if record.value == moment.sharedValue(keepingLikes: record.value.likes) {
            divergentMoments.remove(moment.id)
            return (false, contested)
        }
        divergentMoments.insert(moment.id)
        return (contested.isEmpty, contested)
    }

    /// Notes that shared storage holds a contested value of `momentID` (see
    /// ``MomentsChangeBus``): the server's next answer is written whatever it changes
    /// here. Returns whether this store holds the moment, and so must ask the server.
    func noteContested(_ momentID: String) -> Bool {
        guard records[momentID] != nil else { return false }
        divergentMoments.insert(momentID)
        return true
    }

    /// Notes that shared storage holds a contested value of `userID`'s timeline: the
    /// server's next answer for it is written whatever it changes here.
    func noteContestedTimeline(_ userID: String) {
        divergentTimelines.insert(userID)
    }
}
