import Foundation
import Moments
import Testing

/// `UserDetails` keeps its fields in a shared box: it must still behave as a value of
/// four strings (copies independent, equality and hashing by field, the same JSON).
@Suite struct UserDetailsTests {
    let owner = UserDetails(id: "0", name: "Ada", avatar: "https://img/0.jpg", backgroundImage: "https://img/bg.jpg")

    @Test func settingAFieldChangesThatCopyAlone() {
        var renamed = owner
        renamed.name = "Grace"
        renamed.backgroundImage = "https://img/other.jpg"
        #expect(owner.name == "Ada" && owner.backgroundImage == "https://img/bg.jpg")
        #expect(renamed.id == "0" && renamed.name == "Grace" && renamed.avatar == "https://img/0.jpg")
        #expect(renamed.backgroundImage == "https://img/other.jpg")
        #expect(renamed != owner)
    }

    @Test func equalFieldsAreEqualAndHashAlike() {
        let same = UserDetails(id: "0", name: "Ada", avatar: "https://img/0.jpg", backgroundImage: "https://img/bg.jpg")
        #expect(same == owner)
        #expect(Set([same, owner]).count == 1)
        for (index, field) in [\UserDetails.id, \.name, \.avatar, \.backgroundImage].enumerated() {
            var other = owner
            other[keyPath: field] += "x"
            #expect(other != owner, "field \(index)")
        }
    }

    @Test func encodesAndDecodesTheSameKeys() throws {
        let encoder = JSONEncoder()
        encoder.outputFormatting = .sortedKeys
        let json = String(decoding: try encoder.encode(owner), as: UTF8.self)
        #expect(json == #"{"avatar":"https:\/\/img\/0.jpg","backgroundImage":"https:\/\/img\/bg.jpg","id":"0","name":"Ada"}"#)
        #expect(try JSONDecoder().decode(UserDetails.self, from: Data(json.utf8)) == owner)
        #expect(throws: DecodingError.self) {
            try JSONDecoder().decode(UserDetails.self, from: Data(#"{"id":"0","name":"Ada","avatar":"a"}"#.utf8))
        }
    }

    @Test func printsItsFields() {
        #expect("\(owner)" == #"UserDetails(id: "0", name: "Ada", avatar: "https://img/0.jpg", backgroundImage: "https://img/bg.jpg")"#)
    }
}
