import Foundation
import MomentsNetworking
import MomentsGraphQL
import MomentsHTTP
import Moments

extension GraphQLOperation where Response == MomentsDetails {
    /// Decodes a clean answer whose `data.<field>` is a timeline with the fast reader,
    /// and anything else (errors, surprises) with `decoder`, whose typed errors are the
    /// ones reported.
    func decodeTimeline(_ response: HTTPResponse, decoder: JSONDecoder, field: StaticString) throws -> MomentsDetails {
        if case .useDefaultKeys = decoder.keyDecodingStrategy,
           let details = TimelineFastDecoding.decode(response.body, field: field) {
            return details
        }
        return try decodeEnvelope(response, decoder: decoder)
    }
}
