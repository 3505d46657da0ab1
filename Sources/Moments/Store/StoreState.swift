/// The store's state, normalized: one record per moment id (with the likes in flight
/// on it), shared by every timeline that holds it, and the timelines as ordered lists
/// of ids.
///
/// It holds no locks and does no I/O: ``MomentsStore`` changes it on its actor and
/// turns each change into persistence writes and emissions.
///
/// A class with one owner: the store's actor holds the only reference and never hands
/// it out, so every access is isolated to that actor. (As a struct in the actor, each
/// call of a reading method copied the whole state, a dozen reference counts, first.)
final class StoreState {
    /// Where an answer came from, which decides how much it can be trusted.
    enum Source: Equatable {
        /// The server, answering a refresh or (with the moment's id) a like of the
        /// timeline's owner.
        case server(likeOf: String?)
        /// A response cache: of unknown age.
        case cache
        /// The store's own persistence: of unknown age, and already written.
        case persisted
        /// Another instance, through a ``MomentsChangeBus``: ordered like a server
        /// answer, and already written by that instance.
        case shared
    }

    /// What applying an answer changed.
    struct Applied {
        /// Moments already in memory whose confirmed value (shared by every holder) changed.
        var changedMoments: [String] = []
        /// Whether the answer to a like changed the liked moment as the liker sees it
        /// beneath their like in flight (another user's like in `likes`, say).
        var likersViewChanged = false
        /// Moments whose `isLiked` changed for the answer's owner alone (the answer's
        /// viewer), in a timeline that kept them.
        var changedEntries: [String] = []
        /// The timeline's change, if it appeared or its owner or list changed.
        var timeline: TimelineChange?
        /// The answer conflicts with what the store holds in a way only the server can
        /// settle: refetch the timeline.
        var needsConvergence = false
        /// (moment, liker) registers that differ only because the liker's like is in
        /// flight; if that like fails, refetch.
        var deferredLikers: [LikeKey] = []
        /// (moment, liker) registers another instance changed while the liker's like is
        /// in flight here: the server alone knows which came last, so the register is
        /// refetched once that like's chain ends.
        var contestedLikers: [LikeKey] = []
        /// What to persist.
        var batch = PersistenceBatch()
    }

    private(set) var records: [String: MomentRecord] = [:]
    private(set) var timelines: [String: TimelineRecord] = [:]
    /// Moments and timelines whose value in shared storage (as another instance last
    /// announced it) differs from this store's: the next answer of the server that agrees
    /// with this store's value is written even though nothing changed in memory, so the
    /// storage, and every instance after it, comes to the server's state.
    private var divergentMoments: Set<String> = []
    private var divergentTimelines: Set<String> = []
    /// Records no timeline in memory holds, kept while an answer that may predate them
    /// can still arrive: dropped earlier, a stale answer could bring back an older value.
    private var retired: Set<String> = []
    private var useClock: UInt64 = 0
    /// Stamps for ``MomentRecord/mark`` (see `replaced`).
    private var markClock: UInt64 = 0
    /// Rises with every change to what subscribers see.
    private var version: UInt64 = 0
    /// The last timeline ``displayedTimeline(_:)`` assembled, while still current.
    private var lastDisplayed: (userID: String, version: UInt64, details: MomentsDetails)?
    let capacity: Int
    /// Whether this store is the only writer of its likers' likes (no other instance
    /// shares its storage): its likes' answers are then the authority for their
    /// registers (see ``MomentRecord/merge(_:evidence:pin:likesAreExclusive:isLikeInFlight:)``).
    let likesAreExclusive: Bool

    init(capacity: Int, likesAreExclusive: Bool = true) {
        self.capacity = max(1, capacity)
        self.likesAreExclusive = likesAreExclusive
    }

    // MARK: - Reading

    /// A moment's confirmed value, shared by every timeline holding it (content and
    /// `likes`; `isLiked` `nil`, since it belongs to each viewer).
    func confirmedMoment(_ id: String) -> Moment? {
        records[id]?.value
    }

    /// Who sees a moment change.
    enum Audience {
        /// Every user in memory whose timeline holds it.
        case holders
        /// Every holder but one (whose own like in flight hides the change for now).
        case holdersExcept(String)
        /// One user: the liker, for their own like in flight, or the owner of a timeline
        /// whose `isLiked` of the moment changed.
        case only(String)
    }

    /// The change of `momentID` as `audience` sees it now, each user with their own
    /// `isLiked` and their own like in flight; `nil` if the store holds no such moment.
    func momentChange(_ momentID: String, phase: MomentChange.Phase, likedBy: String?, audience: Audience) -> MomentChange? {
        guard let record = records[momentID] else { return nil }
        var users: Set<String>
        switch audience {
        case .holders: users = record.holders
        case .holdersExcept(let userID):
            users = record.holders
            users.remove(userID)
        case .only(let userID): users = record.holders.contains(userID) ? [userID] : []
        }
        // A change no one sees is not a change (every holder's: kept, as before, for a
        // moment no timeline in memory holds).
        if users.isEmpty, case .holders = audience {} else if users.isEmpty { return nil }
        var isLiked: [String: Bool] = [:]
        var views: [String: Moment] = [:]
        for user in users {
            let liked = entryIsLiked(of: user, on: momentID)
            if !record.intents.isEmpty, record.intents.contains(where: { $0.liker.id == user }) {
                views[user] = view(record, isLiked: liked, by: user)
            } else if let liked {
                isLiked[user] = liked
            }
        }
        // The confirmed value, but for an optimistic change: the liker's view.
        var moment = record.value
        if phase == .optimistic, case .only(let userID) = audience, let own = views[userID] {
            moment = own
            moment.isLiked = nil
        }
        return MomentChange(moment: moment, phase: phase, likedBy: likedBy, holders: users, isLiked: isLiked, views: views)
    }

    /// `userID`'s `isLiked` of `momentID` as their newest answer gave it (`nil` if unknown).
    private func entryIsLiked(of userID: String, on momentID: String) -> Bool? {
        guard let timeline = timelines[userID], let index = timeline.position(of: momentID) else { return nil }
        return timeline.entries[index].isLiked
    }

    /// `userID`'s timeline as subscribers see it (assembled once per change).
    func displayedTimeline(_ userID: String) -> MomentsDetails? {
        if let last = lastDisplayed {
            if last.version == version, last.userID == userID { return last.details }
            // Let go of the last snapshot first: if no one else holds it, the next one is
            // built in its place.
            lastDisplayed = nil
        }
        let details = assembleTimeline(userID)
        if let details { lastDisplayed = (userID, version, details) }
        return details
    }

    /// Assembles the snapshot from the last one, rebuilding only the moments whose
    /// records (or `isLiked`) changed since.
    private func assembleTimeline(_ userID: String) -> MomentsDetails? {
        guard let timeline = timelines[userID] else { return nil }
        let entries = timeline.entries
        let members = timeline.members
        var moments = timeline.shown
        var revisions = timeline.shownRevisions
        timeline.shown = []
        timeline.shownRevisions = []
        if moments.count != members.count {
            moments = []
            moments.reserveCapacity(members.count)
            revisions = members.map(\.revision)
            for index in members.indices { moments.append(view(members[index], isLiked: entries[index].isLiked, by: userID)) }
        } else {
            for index in members.indices where members[index].revision != revisions[index] {
                moments[index] = view(members[index], isLiked: entries[index].isLiked, by: userID)
                revisions[index] = members[index].revision
            }
        }
        timeline.shown = moments
        timeline.shownRevisions = revisions
        return MomentsDetails(userDetails: timeline.userDetails, moments: moments)
    }

    /// `record`'s moment as `userID` sees it: the confirmed value with `isLiked` as the
    /// user's newest answer gave it, and the user's own like in flight on top (a like in
    /// flight is shown to its liker alone; others see it once the server confirms it).
    private func view(_ record: MomentRecord, isLiked: Bool?, by userID: String) -> Moment {
        var moment = record.value
        moment.isLiked = isLiked
        if !record.intents.isEmpty, let intent = record.intents.first(where: { $0.liker.id == userID }) {
            moment.setLike(intent.isLiked, by: intent.liker)
            moment.isLiked = intent.isLiked
        }
        return moment
    }

    /// The users in memory whose timelines hold `momentID`.
    func holders(of momentID: String) -> Set<String> {
        records[momentID]?.holders ?? []
    }

    /// Whether `userID`'s timeline holds `momentID`.
    func timeline(of userID: String, holds momentID: String) -> Bool {
        records[momentID]?.holders.contains(userID) ?? false
    }

    // MARK: - Answers

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

    // MARK: - Likes in flight

    /// Shows `intent` for `momentID` to its liker alone until
    /// ``removeIntent(_:from:generation:)``; returns whether the moment as the liker sees
    /// it changed.
    func setIntent(_ intent: LikeIntent, on momentID: String) -> Bool {
        guard let record = records[momentID] else { return false }
        version &+= 1
        let liker = intent.liker.id
        let isLiked = entryIsLiked(of: liker, on: momentID)
        let before = view(record, isLiked: isLiked, by: liker)
        record.revision &+= 1
        if let index = record.intents.firstIndex(where: { $0.liker.id == liker }) {
            record.intents[index] = intent
        } else {
            record.intents.append(intent)
        }
        return view(record, isLiked: isLiked, by: liker) != before
    }

    /// The generation of `likerID`'s like in flight on `momentID`, if any.
    func intentGeneration(of likerID: String, on momentID: String) -> Int? {
        records[momentID]?.intents.first { $0.liker.id == likerID }?.generation
    }

    /// Takes back `likerID`'s like on `momentID` if it is still call `generation`'s;
    /// returns whether it was, and whether the moment as the liker sees it changed.
    func removeIntent(_ likerID: String, from momentID: String, generation: Int) -> (removed: Bool, changed: Bool) {
        guard let record = records[momentID], record.intents.first(where: { $0.liker.id == likerID })?.generation == generation else {
            return (false, false)
        }
        version &+= 1
        let isLiked = entryIsLiked(of: likerID, on: momentID)
        let before = view(record, isLiked: isLiked, by: likerID)
        record.revision &+= 1
        record.intents.removeAll { $0.liker.id == likerID }
        let changed = view(record, isLiked: isLiked, by: likerID) != before
        retireIfUnused(momentID)
        return (true, changed)
    }

    // MARK: - Memory

    /// Marks `userID`'s timeline as just used; returns whether there is one.
    func touch(_ userID: String) -> Bool {
        guard let timeline = timelines[userID] else { return false }
        useClock += 1
        timeline.lastUse = useClock
        return true
    }

    /// Evicts least recently used timelines down to 90% of capacity once over it,
    /// sparing those `isPinned` names; returns the evicted users.
    func evictIfNeeded(isPinned: (String) -> Bool) -> [String] {
        guard timelines.count > capacity else { return [] }
        version &+= 1
        let target = max(1, capacity - capacity / 10)
        let victims = timelines.filter { !isPinned($0.key) }.sorted { $0.value.lastUse < $1.value.lastUse }
            .prefix(timelines.count - target).map(\.key)
        for userID in victims {
            guard let timeline = timelines.removeValue(forKey: userID) else { continue }
            divergentTimelines.remove(userID)
            for entry in timeline.entries { release(entry.momentID, from: userID) }
        }
        return victims
    }

    /// Forgets `userID`'s timeline and the records no one else holds.
    func forget(_ userID: String) {
        version &+= 1
        divergentTimelines.remove(userID)
        guard let timeline = timelines.removeValue(forKey: userID) else { return }
        for entry in timeline.entries { release(entry.momentID, from: userID) }
    }

    private func release(_ momentID: String, from userID: String) {
        records[momentID]?.holders.remove(userID)
        retireIfUnused(momentID)
    }

    private func retireIfUnused(_ momentID: String) {
        guard let record = records[momentID], record.holders.isEmpty, record.intents.isEmpty else { return }
        retired.insert(momentID)
    }

    /// Drops the retired records that no answer can predate any more: every request in
    /// flight (the oldest left at `oldestRequest`) was sent after their last evidence.
    func sweepRetired(oldestRequest: StoreInstant?) {
        guard !retired.isEmpty else { return }
        for id in retired {
            guard let record = records[id], record.holders.isEmpty, record.intents.isEmpty else {
                retired.remove(id)
                continue
            }
            if let oldestRequest, oldestRequest <= record.confirmation.received { continue }
            records[id] = nil
            retired.remove(id)
            divergentMoments.remove(id)
        }
    }

    /// The number of records no timeline in memory holds (for tests and diagnostics).
    var retiredCount: Int { retired.count }
}

/// A (user, moment) pair: a register of a moment, or a chain of one user's likes of it.
struct LikeKey: Hashable, Sendable {
    let userID: String
    let momentID: String
}
