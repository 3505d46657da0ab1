import Foundation

extension Data {
    /// `segments` one after the other, then `last`: one allocation, one copy of each.
    ///
    /// A request body is built this way on every call; `Data.append` would go through
    /// the general replacing path of `Data`'s storage once per segment.
    init(joining segments: UnsafeRawBufferPointer..., closingWith last: UInt8) {
        let count = segments.reduce(1) { $0 + $1.count }
        self.init(count: count)
        withUnsafeMutableBytes { target in
            var offset = 0
            for segment in segments {
                UnsafeMutableRawBufferPointer(rebasing: target[offset..<offset + segment.count]).copyMemory(from: segment)
                offset += segment.count
            }
            target[offset] = last
        }
    }

    /// `first`, then `second`, then `last`: one allocation, one copy of each.
    init(joining first: Data, _ second: Data, closingWith last: UInt8) {
        self = first.withUnsafeBytes { first in
            second.withUnsafeBytes { second in Data(joining: first, second, closingWith: last) }
        }
    }
}
