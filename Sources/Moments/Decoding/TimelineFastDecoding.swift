package import Foundation

/// Decodes `{"data": {"<field>": MomentsDetails}}` straight from bytes, several times
/// faster than `JSONDecoder` on Linux.
///
/// It returns `nil` for anything but a clean answer of exactly the expected shape
/// (GraphQL errors, a missing or mistyped field, a duplicate key, an unknown moment
/// type, invalid UTF-8, escaped keys, deep nesting…); the caller then decodes with
/// `JSONDecoder`, which gives the precise, typed error. Unknown keys are skipped, as
/// `JSONDecoder` skips them.
package enum TimelineFastDecoding {
    typealias Unreadable = JSONScanner.Unreadable

    package static func decode(_ body: Data, field: StaticString) -> MomentsDetails? {
        body.withUnsafeBytes { raw -> MomentsDetails? in
            guard let base = raw.bindMemory(to: UInt8.self).baseAddress else { return nil }
            var scanner = JSONScanner(UnsafeBufferPointer(start: base, count: raw.count))
            return try? envelope(&scanner, field: field)
        }
    }

    /// A JSON array of moments, as storage keeps them (`[{…}, {…}]`), or `nil` for
    /// anything else (the caller then decodes with `JSONDecoder`).
    package static func decodeMoments(_ text: String) -> [Moment]? {
        var text = text
        return text.withUTF8 { bytes -> [Moment]? in
            var scanner = JSONScanner(bytes)
            return try? momentList(&scanner)
        }
    }

    private static func momentList(_ scanner: inout JSONScanner) throws(Unreadable) -> [Moment] {
        let list = try scanner.readArray(moment)
        try scanner.end()
        return list
    }

    private static func envelope(_ scanner: inout JSONScanner, field: StaticString) throws(Unreadable) -> MomentsDetails {
        var details: MomentsDetails?
        try scanner.beginObject()
        while let key = try scanner.nextKey() {
            if key.spells("data") {
                guard details == nil else { throw Unreadable() }
                try scanner.beginObject()
                while let inner = try scanner.nextKey() {
                    if inner.spells(field) {
                        guard details == nil else { throw Unreadable() }
                        details = try timeline(&scanner)
                    } else {
                        try scanner.skipValue()
                    }
                }
            } else if key.spells("errors") {
                // Errors, if any, are for the standard path to report.
                guard scanner.readNull() else {
                    try scanner.beginArray()
                    guard try !scanner.nextElement() else { throw Unreadable() }
                    continue
                }
            } else {
                try scanner.skipValue()
            }
        }
        try scanner.end()
        guard let details else { throw Unreadable() }
        return details
    }

    /// A timeline file's members (see `JSONFilePersistence`), or `nil` for anything the
    /// fast reader does not take (the caller then decodes with `JSONDecoder`).
    static func decodeFile(_ data: Data) -> (format: String, version: Int64, userID: String, details: MomentsDetails, checksum: Int64?)? {
        data.withUnsafeBytes { raw -> (String, Int64, String, MomentsDetails, Int64?)? in
            guard let base = raw.bindMemory(to: UInt8.self).baseAddress else { return nil }
            var scanner = JSONScanner(UnsafeBufferPointer(start: base, count: raw.count))
            return try? file(&scanner)
        }
    }

    private static func file(_ scanner: inout JSONScanner) throws(Unreadable) -> (String, Int64, String, MomentsDetails, Int64?) {
        var format: String?, version: Int64?, userID: String?, details: MomentsDetails?, checksum: Int64??
        try scanner.beginObject()
        while let key = try scanner.nextKey() {
            if key.spells("format") { try set(&format, scanner.readString()) }
            else if key.spells("version") { try set(&version, scanner.readInt64()) }
            else if key.spells("userID") { try set(&userID, scanner.readString()) }
            else if key.spells("details") { try set(&details, timeline(&scanner)) }
            else if key.spells("checksum") { try setOptional(&checksum, scanner.readNull() ? nil : scanner.readInt64()) }
            else { try scanner.skipValue() }
        }
        try scanner.end()
        guard let format, let version, let userID, let details else { throw Unreadable() }
        return (format, version, userID, details, checksum ?? nil)
    }

    private static func timeline(_ scanner: inout JSONScanner) throws(Unreadable) -> MomentsDetails {
        var user: UserDetails?
        var moments: [Moment]?
        try scanner.beginObject()
        while let key = try scanner.nextKey() {
            if key.spells("userDetails") {
                guard user == nil else { throw Unreadable() }
                user = try userDetails(&scanner)
            } else if key.spells("moments") {
                guard moments == nil else { throw Unreadable() }
                moments = try scanner.readArray(moment)
            } else {
                try scanner.skipValue()
            }
        }
        guard let user, let moments else { throw Unreadable() }
        return MomentsDetails(userDetails: user, moments: moments)
    }

    private static func userDetails(_ scanner: inout JSONScanner) throws(Unreadable) -> UserDetails {
        var id: String?, name: String?, avatar: String?, background: String?
        try scanner.beginObject()
        while let key = try scanner.nextKey() {
            if key.spells("id") { try set(&id, scanner.readString()) }
            else if key.spells("name") { try set(&name, scanner.readString()) }
            else if key.spells("avatar") { try set(&avatar, scanner.readString()) }
            else if key.spells("backgroundImage") { try set(&background, scanner.readString()) }
            else { try scanner.skipValue() }
        }
        guard let id, let name, let avatar, let background else { throw Unreadable() }
        return UserDetails(id: id, name: name, avatar: avatar, backgroundImage: background)
    }

    private static func moment(_ scanner: inout JSONScanner) throws(Unreadable) -> Moment {
        var id: String?, author: Moment.MomentUserDetails?, type: Moment.MomentType?, photos: [String]?, created: String?
        var title: String??, url: String??, isLiked: Bool??, likes: [Moment.LikedUser]??
        try scanner.beginObject()
        while let key = try scanner.nextKey() {
            if key.spells("id") { try set(&id, scanner.readString()) }
            else if key.spells("userDetails") { try set(&author, momentUser(&scanner)) }
            else if key.spells("type") { try set(&type, momentType(&scanner)) }
            else if key.spells("title") { try setOptional(&title, scanner.readNull() ? nil : scanner.readString()) }
            else if key.spells("url") { try setOptional(&url, scanner.readNull() ? nil : scanner.readString()) }
            else if key.spells("photos") { try set(&photos, scanner.readStringArray()) }
            else if key.spells("createdDate") { try set(&created, scanner.readString()) }
            else if key.spells("isLiked") { try setOptional(&isLiked, scanner.readNull() ? nil : scanner.readBool()) }
            else if key.spells("likes") { try setOptional(&likes, scanner.readNull() ? nil : likedUsers(&scanner)) }
            else { try scanner.skipValue() }
        }
        guard let id, let author, let type, let photos, let created else { throw Unreadable() }
        return Moment(id: id, userDetails: author, type: type, title: title ?? nil, url: url ?? nil, photos: photos,
                      createdDate: created, isLiked: isLiked ?? nil, likes: likes ?? nil)
    }

    /// A moment's type, matched on its bytes against each type's raw value (a `String`
    /// is made only for a value written with escapes).
    private static func momentType(_ scanner: inout JSONScanner) throws(Unreadable) -> Moment.MomentType {
        scanner.skipWhitespace()
        let span = try scanner.scanString()
        let type: Moment.MomentType?
        if span.hasEscapes {
            type = Moment.MomentType(rawValue: try scanner.string(span))
        } else {
            let raw = UnsafeBufferPointer(rebasing: scanner.bytes[span.start..<span.end])
            type = Moment.MomentType.allCases.first { type in
                var value = type.rawValue
                return value.withUTF8 { value in
                    guard value.count == raw.count else { return false }
                    guard let left = value.baseAddress, let right = raw.baseAddress else { return true }  // both empty
                    return memcmp(left, right, raw.count) == 0
                }
            }
        }
        guard let type else { throw Unreadable() }
        return type
    }

    private static func momentUser(_ scanner: inout JSONScanner) throws(Unreadable) -> Moment.MomentUserDetails {
        var id: String?, name: String?, avatar: String?
        try scanner.beginObject()
        while let key = try scanner.nextKey() {
            if key.spells("id") { try set(&id, scanner.readString()) }
            else if key.spells("name") { try set(&name, scanner.readRepeatedString()) }
            else if key.spells("avatar") { try set(&avatar, scanner.readRepeatedString()) }
            else { try scanner.skipValue() }
        }
        guard let name, let avatar else { throw Unreadable() }
        return Moment.MomentUserDetails(id: id, name: name, avatar: avatar)
    }

    private static func likedUsers(_ scanner: inout JSONScanner) throws(Unreadable) -> [Moment.LikedUser] {
        try scanner.readArray { scanner throws(Unreadable) in
            var id: String?, avatar: String?
            try scanner.beginObject()
            while let key = try scanner.nextKey() {
                if key.spells("id") { try set(&id, scanner.readString()) }
                else if key.spells("avatar") { try set(&avatar, scanner.readRepeatedString()) }
                else { try scanner.skipValue() }
            }
            guard let id, let avatar else { throw Unreadable() }
            return Moment.LikedUser(id: id, avatar: avatar)
        }
    }

    /// A duplicate key is left to `JSONDecoder` to judge.
    private static func set<T>(_ slot: inout T?, _ value: T) throws(Unreadable) {
        guard slot == nil else { throw Unreadable() }
        slot = value
    }

    private static func setOptional<T>(_ slot: inout T??, _ value: T?) throws(Unreadable) {
        guard slot == nil else { throw Unreadable() }
        slot = .some(value)
    }
}
