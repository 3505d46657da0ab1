/// The fields of the Moments schema that the SDK's operations select.
///
/// Entries of `Moment.likes` are selected with `id` and `avatar` only: the BFF fails the
/// whole answer if any other field of a liking user is asked for.
enum MomentsSelection {
    static let userDetails = "userDetails { id name avatar backgroundImage }"
    static let momentFields = "id userDetails { id name avatar } type title url photos createdDate"
    static let likes = "likes { id avatar }"
}
