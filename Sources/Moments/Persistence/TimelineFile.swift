import Foundation

/// The content of one timeline file.
struct TimelineFile: Codable {
    struct Header: Decodable {
        let format: String
        let version: Int

        init(from decoder: any Decoder) throws {
            let container = try decoder.container(keyedBy: CodingKeys.self)
            format = try container.decode(String.self, forKey: .format)
            guard format == TimelineFile.format else {
                throw DecodingError.dataCorruptedError(forKey: .format, in: container, debugDescription: "format is '\(format)'")
            }
            version = try container.decode(Int.self, forKey: .version)
        }

        enum CodingKeys: String, CodingKey { case format, version }
    }

    static let format = "moments.timeline"
    var format = TimelineFile.format
    let version: Int
    let userID: String
    let details: MomentsDetails
    /// ``ContentChecksum`` of `userID` and `details`; absent in version 1 files.
    let checksum: Int64?

    init(version: Int, userID: String, details: MomentsDetails, checksum: Int64?) {
        self.version = version
        self.userID = userID
        self.details = details
        self.checksum = checksum
    }
}
