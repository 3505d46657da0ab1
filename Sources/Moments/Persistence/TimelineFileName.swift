import MomentsSupport
/// Maps any user id to a file name that is safe, unique and stays inside its directory.
///
/// Short ids are spelled out in lowercase hex of their UTF-8 bytes (`u-…`), so no id can
/// contain a separator, a dot-dot, a NUL, or differ from another only by case. Ids whose
/// hex would be too long for a file name are named by their SHA-256 (`h-…`), and the
/// file itself records the id.
enum TimelineFileName {
    static let fileExtension = ".json"
    private static let maximumHexLength = 200

    static func name(for userID: String) -> String {
        let hex = hexEncode(Array(userID.utf8))
        if hex.count <= maximumHexLength { return "u-" + hex + fileExtension }
        return "h-" + SHA256.hexDigest(Array(userID.utf8)) + fileExtension
    }

    /// The user id a `u-` name spells, or `nil` for hashed and foreign names.
    static func userID(fromSpelledName name: String) -> String? {
        guard name.hasPrefix("u-"), name.hasSuffix(fileExtension) else { return nil }
        let hex = name.dropFirst(2).dropLast(fileExtension.count)
        guard let bytes = hexDecode(hex) else { return nil }
        return String(validating: bytes, as: UTF8.self)
    }

    static func isHashedName(_ name: String) -> Bool {
        name.hasPrefix("h-") && name.hasSuffix(fileExtension)
    }

    private static let digits = Array("0123456789abcdef".utf8)

    private static func hexEncode(_ bytes: [UInt8]) -> String {
        var out = [UInt8]()
        out.reserveCapacity(bytes.count * 2)
        for byte in bytes {
            out.append(digits[Int(byte >> 4)])
            out.append(digits[Int(byte & 0x0F)])
        }
        return String(decoding: out, as: UTF8.self)
    }

    private static func hexDecode(_ hex: Substring) -> [UInt8]? {
        let utf8 = Array(hex.utf8)
        guard utf8.count % 2 == 0 else { return nil }
        var bytes = [UInt8]()
        bytes.reserveCapacity(utf8.count / 2)
        var index = 0
        while index < utf8.count {
            guard let high = digits.firstIndex(of: utf8[index]), let low = digits.firstIndex(of: utf8[index + 1]) else { return nil }
            bytes.append(UInt8(high << 4 | low))
            index += 2
        }
        return bytes
    }
}
