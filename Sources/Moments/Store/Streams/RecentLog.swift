/// The latest `capacity` elements, oldest first: once full, each append overwrites the
/// oldest element in place, so keeping a log of recent changes copies nothing.
struct RecentLog<Element>: Sequence {
    private var storage: [Element] = []
    /// Where the oldest element is, once the log is full (0 before).
    private var start = 0
    let capacity: Int

    init(capacity: Int) {
        self.capacity = Swift.max(0, capacity)
        storage.reserveCapacity(Swift.min(self.capacity, 1_024))
    }

    var count: Int { storage.count }
    var first: Element? { storage.isEmpty ? nil : storage[start] }

    /// Appends `element`, dropping the oldest if the log is full (with no capacity, keeps nothing).
    mutating func append(_ element: Element) {
        if storage.count < capacity {
            storage.append(element)
        } else if capacity > 0 {
            storage[start] = element
            start = start + 1 == capacity ? 0 : start + 1
        }
    }

    func makeIterator() -> Iterator { Iterator(storage: storage, start: start) }

    struct Iterator: IteratorProtocol {
        let storage: [Element]
        let start: Int
        var offset = 0

        init(storage: [Element], start: Int) {
            self.storage = storage
            self.start = start
        }

        mutating func next() -> Element? {
            guard offset < storage.count else { return nil }
            defer { offset += 1 }
            let index = start + offset
            return storage[index < storage.count ? index : index - storage.count]
        }
    }
}

extension RecentLog: Sendable where Element: Sendable {}
