/// Stores a list of strings in one TEXT column as `<byte count>:<bytes>` pieces, which
/// holds any content (separators, newlines, NULs) and decodes without ambiguity, and is
/// far cheaper than JSON for the photos and likes of every moment row.
enum StringListCoding {
    struct Malformed: Error {}

    static func encode(_ strings: [String]) -> String {
        var out = ""
        for string in strings {
            out += String(string.utf8.count)
            out += ":"
            out += string
        }
        return out
    }

    static func decode(_ text: String) throws(Malformed) -> [String] {
        var result: [String] = []
        var utf8 = Substring(text).utf8[...]
        while !utf8.isEmpty {
            guard let colon = utf8.firstIndex(of: UInt8(ascii: ":")),
                  let count = Int(Substring(utf8[utf8.startIndex..<colon])), count >= 0 else { throw Malformed() }
            let start = utf8.index(after: colon)
            guard let end = utf8.index(start, offsetBy: count, limitedBy: utf8.endIndex) else { throw Malformed() }
            guard let piece = String(utf8[start..<end]) else { throw Malformed() }
            result.append(piece)
            utf8 = utf8[end...]
        }
        return result
    }
}
