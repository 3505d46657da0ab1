import MomentsSupport

/// The checksums stored beside timelines and moments, so that damage which leaves the
/// data well-formed (a flipped byte inside a text value) is detected on load.
package enum ContentChecksum {
    /// The checksum of a moment record: every field but `isLiked`.
    package static func of(_ moment: Moment) -> Int64 {
        var checksum = Checksum()
        add(moment, to: &checksum)
        return checksum.signedValue
    }

    /// The checksum of a stored timeline: its user, owner and entries.
    package static func of(_ timeline: StoredTimeline, userID: String) -> Int64 {
        var checksum = Checksum()
        checksum.add(userID)
        add(timeline.userDetails, to: &checksum)
        checksum.add(UInt64(timeline.entries.count))
        for entry in timeline.entries {
            checksum.add(entry.momentID)
            checksum.add(entry.isLiked.map { $0 ? UInt8(2) : 1 } ?? 0)
        }
        return checksum.signedValue
    }

    /// The checksum of a whole timeline as one file holds it.
    package static func of(_ details: MomentsDetails, userID: String) -> Int64 {
        var checksum = Checksum()
        checksum.add(userID)
        add(details.userDetails, to: &checksum)
        checksum.add(UInt64(details.moments.count))
        for moment in details.moments {
            add(moment, to: &checksum)
            checksum.add(moment.isLiked.map { $0 ? UInt8(2) : 1 } ?? 0)
        }
        return checksum.signedValue
    }

    private static func add(_ user: UserDetails, to checksum: inout Checksum) {
        checksum.add(user.id)
        checksum.add(user.name)
        checksum.add(user.avatar)
        checksum.add(user.backgroundImage)
    }

    private static func add(_ moment: Moment, to checksum: inout Checksum) {
        checksum.add(moment.id)
        if let authorID = moment.userDetails.id {
            checksum.add(authorID)
        } else {
            checksum.add(UInt64.max)  // no text's length: an absent id is unlike every id
        }
        checksum.add(moment.userDetails.name)
        checksum.add(moment.userDetails.avatar)
        checksum.add(moment.type.rawValue)
        checksum.add(moment.title)
        checksum.add(moment.url)
        checksum.add(UInt64(moment.photos.count))
        for photo in moment.photos { checksum.add(photo) }
        checksum.add(moment.createdDate)
        if let likes = moment.likes {
            checksum.add(UInt64(likes.count) + 1)
            for like in likes {
                checksum.add(like.id)
                checksum.add(like.avatar)
            }
        } else {
            checksum.add(UInt64(0))
        }
    }
}
