

/// Answers: the ordering rule applied to a timeline's list and to each of its moments.
extension StoreState {
    /// Applies `details`, an answer for `userID`'s timeline, under the ordering rule of
    /// ``MomentRecord/merge(_:evidence:pin:likesAreExclusive:isLikeInFlight:)``, applied to each moment and
    /// (with the owner and order) to the timeline's list.
    ///
    /// `momentEvidence` gives a moment an age of its own where the answer is not one
    /// snapshot (a timeline another instance committed lists moment rows written at
    /// other times); by default each moment has the answer's.
    ///
    /// - Throws: ``MomentsStoreError`` for an answer listing a moment twice; nothing is applied.
    func apply(
        _ details: MomentsDetails, for userID: String, evidence: Evidence, source: Source,
        momentEvidence: [String: Evidence]? = nil, isLikeInFlight: (LikeKey) -> Bool
    ) throws -> Applied {
        defer { version &+= 1 }
        let existing = timelines[userID]
        // A stored timeline lists each id once: an answer listing the same ids in the same
        // order needs no other check.
        let sameList = existing?.hasSameList(as: details.moments) ?? false
        // The records of the same list are the timeline's; another list's are looked up
        // once, here, and checked for an id listed twice.
        let sameMembers = sameList ? existing?.members : nil
        let found = sameList ? [] : try lookUpRecords(of: details.moments, for: userID, listedBefore: existing)
        var applied = Applied()
        // Answers are written unless they were read from storage; they are settled with
        // the server unless they came from this store's own persistence.
        let persists = source != .persisted && source != .shared
        let settles = source != .persisted
        let isShared = source == .shared
        let pinnedID = pinnedMomentID(source)
        var pin: LikePin?
        if let pinnedID, let liked = details.moment(withID: pinnedID) {
            let isLiked = liked.likes.map { likes in likes.contains { $0.id == userID } } ?? liked.isLiked ?? false
            let avatar = liked.likes?.first { $0.id == userID }?.avatar ?? details.userDetails.avatar
            pin = LikePin(isLiked: isLiked, liker: Moment.LikedUser(id: userID, avatar: avatar),
                          sent: evidence.sent ?? evidence.received, received: evidence.received)
        }
        // A server's answer that changes nothing here is still written where shared
        // storage may hold another value (see `agreesWithDivergent`, `confirmsSharedLike`).
        let writesAgreement: Bool
        if persists, case .server = source { writesAgreement = !divergentMoments.isEmpty || !likesAreExclusive } else { writesAgreement = false }

        // The records of a new list, in order (a timeline with the same list has them).
        var members: [MomentRecord] = []
        if !sameList { members.reserveCapacity(details.moments.count) }
        var created: [String] = []
        // A moment the store holds that the answer does not change needs only its
        // evidence advanced, unless this answer brings more than one age, a pin,
        // another instance's view, or a write of agreement.
        let skimsUnchanged = momentEvidence == nil && !isShared && !writesAgreement
        let moments = details.moments
        // With the same list, those moments are skimmed first, in one tight pass, and the
        // loop below sees only the others; a new list's are skimmed as the loop meets
        // them, their records joining `members`.
        let unskimmed = skimsUnchanged ? sameMembers.map { skimUnchanged(moments, records: $0, evidence: evidence, sparing: pinnedID) } : nil
        for step in 0..<(unskimmed?.count ?? moments.count) {
            let index = unskimmed?[step] ?? step
            let moment = moments[index]
            if skimsUnchanged, !sameList, pinnedID == nil || moment.id != pinnedID, let record = found[index],
               record.absorbIfUnchanged(moment, evidence: evidence) {
                members.append(record)
                continue
            }
            let id = moment.id
            let own = momentEvidence.map { $0[id] ?? .ofUnknownAge(receivedAt: evidence.received) } ?? evidence
            let momentPin = pinnedID != nil && id == pinnedID ? pin : nil
            guard let record = sameMembers?[index] ?? found[index] else {
                let record = MomentRecord(value: moment.sharedValue(keepingLikes: nil), evidence: own)
                if let momentPin { record.pins[userID] = momentPin }
                records[id] = record
                if !sameList { members.append(record) }
                created.append(id)
                if persists { applied.batch.moments[id] = record.value }
                continue
            }
            if !sameList { members.append(record) }
            // The liker's view of the moment their like mutated, while their like is still
            // shown on top: the like's end emits it, if this answer changed it.
            let likerViewBefore = momentPin != nil && record.intents.contains(where: { $0.liker.id == userID })
                ? view(record, isLiked: nil, by: userID) : nil
            let merge = record.merge(moment, evidence: own, pin: momentPin, likesAreExclusive: likesAreExclusive) { liker in
                isLikeInFlight(LikeKey(userID: liker, momentID: id))
            }
            if merge.changed {
                if let likerViewBefore, view(record, isLiked: nil, by: userID) != likerViewBefore { applied.likersViewChanged = true }
                applied.changedMoments.append(id)
                applied.changedPositions.append(index)
                if persists { applied.batch.moments[id] = record.value }
            }
            if isShared {
                let noted = noteShared(moment)
                applied.needsConvergence = applied.needsConvergence || merge.isAmbiguous || noted.settleNow
                applied.contestedLikers += noted.contested
            } else if settles {
                if merge.isAmbiguous { applied.needsConvergence = true }
                if !merge.deferredLikers.isEmpty {
                    // With other writers, a difference a like in flight would explain may be
                    // another instance's change of the same like: contested, not deferred.
                    let keys = merge.deferredLikers.map { LikeKey(userID: $0, momentID: id) }
                    if likesAreExclusive { applied.deferredLikers += keys } else { applied.contestedLikers += keys }
                }
            }
            if writesAgreement, !merge.changed, agreesWithDivergent(moment) || confirmsSharedLike(moment, pin: momentPin) {
                applied.batch.moments[id] = record.value
            }
        }

        useClock += 1
        guard let timeline = existing else {
            let entries = details.moments.map { StoredTimeline.Entry(momentID: $0.id, isLiked: $0.isLiked) }
            timelines[userID] = TimelineRecord(userDetails: details.userDetails, entries: entries, members: members, evidence: evidence, lastUse: useClock)
            for record in members { record.holders.insert(userID) }
            applied.timeline = TimelineChange(
                userID: userID, reason: .loaded, userDetails: details.userDetails, momentIDs: entries.map(\.momentID),
                inserted: zip(entries, members).map { view($1, isLiked: $0.isLiked, by: userID) },
                removed: [], changed: applied.changedMoments
            )
            if persists { applied.batch.timelines[userID] = StoredTimeline(userDetails: details.userDetails, entries: entries) }
            return applied
        }
        timeline.lastUse = useClock
        // The timeline's register is its owner, its list and the owner's `isLiked` of
        // each moment: what the server answered for this viewer.
        let sameOwnerAndList = sameList && timeline.userDetails == details.userDetails
        var differingIsLiked: [Int] = []
        if sameList {
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
                let oldEntries = timeline.entries
                let oldMembers = timeline.members
                timeline.userDetails = details.userDetails
                timeline.replaceList(with: details.moments.map { StoredTimeline.Entry(momentID: $0.id, isLiked: $0.isLiked) },
                                     members: sameList ? nil : members)
                let change = replaced(oldEntries, oldMembers, with: timeline, for: userID, changed: applied.changedMoments)
                applied.timeline = change.timeline
                applied.changedEntries = change.isLikedChanged
            }
            if !sameTimeline, persists { applied.batch.timelines[userID] = timeline.stored }
        } else if !evidence.isCertainlyOlder(than: timeline.evidence) {
            // An answer of unknown order: the value stands (until the server settles a
            // disagreement), and its age now covers the answer, whether it agreed or not,
            // so a later answer is taken as newer only if it was sent after both.
            if evidence.sent != nil { timeline.evidence = timeline.evidence.covering(evidence) }
            if !sameTimeline, settles { applied.needsConvergence = true }
        }
        if isShared {
            if holdsAnswer {
                divergentTimelines.remove(userID)
            } else {
                divergentTimelines.insert(userID)
                applied.needsConvergence = true
            }
        } else if persists, case .server = source, holdsAnswer, !divergentTimelines.isEmpty, divergentTimelines.remove(userID) != nil {
            applied.batch.timelines[userID] = timeline.stored
        } else if persists, !likesAreExclusive, pinnedID != nil, holdsAnswer {
            // A like's answer in storage shared with other instances: the liker's timeline
            // (its `isLiked`) is written even when nothing changed here, since another
            // instance may have written a different value of the same register.
            applied.batch.timelines[userID] = timeline.stored
        }
        // Records made for moments this timeline did not take are not persisted.
        for id in created where records[id]?.holders.isEmpty == true {
            applied.batch.moments[id] = nil
            retireIfUnused(id)
        }
        return applied
    }

    /// Absorbs each of `moments` that its record (`records`, in the same order) holds
    /// unchanged, as ``MomentRecord/absorbIfUnchanged(_:evidence:)`` does, but
    /// `pinnedID`'s; returns the indices of the others.
    ///
    /// Reads both lists in place, so a moment whose content is its record's own box (an
    /// answer repeating what the store holds, or served from memory) is settled without
    /// retaining the record or the box; other moments compare field by field.
    private func skimUnchanged(_ moments: [Moment], records: [MomentRecord], evidence: Evidence, sparing pinnedID: String?) -> [Int] {
        var others: [Int] = []
        moments.withUnsafeBufferPointer { moments in
            records.withUnsafeBufferPointer { records in
                for index in moments.indices {
                    if pinnedID == nil || moments[index].id != pinnedID, records[index].absorbIfUnchanged(moments[index], evidence: evidence) {
                        continue
                    }
                    others.append(index)
                }
            }
        }
        return others
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
    func confirmation(of batch: PersistenceBatch, answer evidence: Evidence) -> ConfirmationInterval {
        var confirmation = evidence
        for id in batch.moments.keys {
            if let record = records[id] { confirmation = confirmation.covering(record.confirmation) }
        }
        for userID in batch.timelines.keys {
            if let timeline = timelines[userID] { confirmation = confirmation.covering(timeline.evidence) }
        }
        return confirmation.confirmationInterval
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
    private func noteShared(_ moment: Moment) -> (settleNow: Bool, contested: [LikeKey]) {
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

    private func pinnedMomentID(_ source: Source) -> String? {
        if case .server(let momentID) = source { return momentID }
        return nil
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
