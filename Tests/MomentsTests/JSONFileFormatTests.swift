import Foundation
@testable import Moments
import MomentsTestSupport
import Testing

/// A large timeline is written a slice of moments at a time and read without building a
/// tree of the file, yet the file holds exactly the JSON value `JSONEncoder` makes of the
/// whole timeline (its key order aside, which `JSONEncoder` does not keep either), and
/// reads back the same whichever reader takes it.
@Suite struct JSONFileFormatTests {
    @Test(arguments: [0, 1, 999, 1_000, 1_001, 2_500])
    func aFileWrittenInSlicesIsTheWholeEncodingAndReadsBack(moments count: Int) async throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let persistence = try JSONFilePersistence(directory: directory.url)
        var details = SampleTimelines.timeline(user: "u\"1", moments: count)
        if count > 0 { details.moments[count - 1].title = #"the "moments":[] key inside a string"# }
        try await persistence.save(details, for: "u\"1")

        let written = try Data(contentsOf: persistence.fileURL(for: "u\"1"))
        let whole = try JSONEncoder().encode(TimelineFile(
            version: JSONFilePersistence.formatVersion, userID: "u\"1", details: details,
            checksum: ContentChecksum.of(details, userID: "u\"1")
        ))
        let sameValue = try (JSONSerialization.jsonObject(with: written) as? NSDictionary)?
            .isEqual(to: JSONSerialization.jsonObject(with: whole) as? [String: Any] ?? [:]) ?? false
        #expect(sameValue, "the file is the whole timeline's encoding")
        #expect(try JSONDecoder().decode(TimelineFile.self, from: written).details == details, "JSONDecoder reads it back")
        let fast = try #require(TimelineFastDecoding.decodeFile(written))
        #expect(fast.details == details && fast.userID == "u\"1" && fast.version == 2)
        #expect(try await persistence.load(userID: "u\"1") == details)
    }
}
