/// Ids as the database keeps them.
///
/// PostgreSQL text cannot hold the NUL character, which an id may contain: ids are
/// stored with `\` written `\\` and NUL written `\0`. Ids without either (all usual
/// ones) are stored as they are.
enum StoredID {
    static func encode(_ id: String) -> String {
        guard id.utf8.contains(where: { $0 == 0 || $0 == UInt8(ascii: "\\") }) else { return id }
        var text = ""
        for scalar in id.unicodeScalars {
            switch scalar {
            case "\\": text += "\\\\"
            case "\0": text += "\\0"
            default: text.unicodeScalars.append(scalar)
            }
        }
        return text
    }

    static func decode(_ stored: String) -> String {
        guard stored.utf8.contains(UInt8(ascii: "\\")) else { return stored }
        var text = ""
        var escaped = false
        for scalar in stored.unicodeScalars {
            if escaped {
                text.unicodeScalars.append(scalar == "0" ? "\0" : scalar)
                escaped = false
            } else if scalar == "\\" {
                escaped = true
            } else {
                text.unicodeScalars.append(scalar)
            }
        }
        return text
    }
}
