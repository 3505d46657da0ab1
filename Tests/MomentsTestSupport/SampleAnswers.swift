/// BFF answers as JSON text, as the BFF sends them, for tests of decoding.
public enum SampleAnswers {
    /// A `getMomentsDetailsByUserID` answer covering the optional and odd shapes:
    /// `url` absent, `title` null, a unicode title, empty photos.
    public static let oddShapes = #"""
    {"data": {"getMomentsDetailsByUserID": {
      "userDetails": {"id": "0", "name": "Jake", "avatar": "https://img/0.jpg", "backgroundImage": "https://img/bg0.jpg"},
      "moments": [
        {"id": "a", "userDetails": {"id": "1", "name": "Taylor", "avatar": "https://img/1.jpg"},
         "type": "PHOTOS", "title": null, "photos": ["https://img/p1.jpg", "https://img/p2.jpg"],
         "createdDate": "1605521360", "isLiked": true, "likes": [{"id": "0", "avatar": "https://img/0.jpg"}]},
        {"id": "b", "userDetails": {"id": "1", "name": "Taylor", "avatar": "https://img/1.jpg"},
         "type": "URL", "title": "東京の夜 🌃 — café", "url": "https://swift.org", "photos": [],
         "createdDate": "1605435065", "isLiked": false, "likes": []}
      ]}}}
    """#
}
