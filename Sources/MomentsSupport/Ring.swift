/// A first-in first-out queue over an array, with amortized O(1) removal at the front.
package struct Ring<Element>: Sequence {
    package init() {}

    private var storage: [Element] = []
    private var head = 0

    package var count: Int { storage.count - head }
    package var isEmpty: Bool { head == storage.count }
    package var first: Element? { head < storage.count ? storage[head] : nil }

    package mutating func append(_ element: Element) { storage.append(element) }

    package mutating func popFirst() -> Element? {
        guard head < storage.count else { return nil }
        let element = storage[head]
        head += 1
        if head == storage.count {
            storage.removeAll(keepingCapacity: true)
            head = 0
        } else if head >= 64, head * 2 >= storage.count {
            storage.removeFirst(head)
            head = 0
        }
        return element
    }

    /// Removes the first element that `matches`; returns whether there was one. O(n).
    package mutating func removeFirst(where matches: (Element) -> Bool) -> Bool {
        guard let index = storage[head...].firstIndex(where: matches) else { return false }
        storage.remove(at: index)
        return true
    }

    package func makeIterator() -> ArraySlice<Element>.Iterator { storage[head...].makeIterator() }
}

extension Ring: Sendable where Element: Sendable {}
