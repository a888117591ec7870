import Dispatch
import Synchronization
import Testing

@testable import ReceiptVerifier

/// The map behind the verification caches: read from many threads at once, each in a part of its own.
@Suite("Read-mostly cache")
struct ReadMostlyCacheTests {
    @Test("a value stored by one thread is found by every other, and counted once")
    func storedOnceFoundByAll() {
        let cache = ReadMostlyCache<String, Int>(capacity: 8)
        cache.store(42, for: "answer")
        let found = Mutex<[Int?]>([])
        DispatchQueue.concurrentPerform(iterations: 64) { _ in
            let value = cache.value(for: "answer")
            found.withLock { $0.append(value) }
        }
        #expect(found.withLock { $0 } == Array(repeating: 42, count: 64))
        #expect(cache.value(for: "other") == nil)
        #expect(cache.count == 1)
    }

    @Test("a value stored again replaces the old one, for the storing thread and for threads that had not read it")
    func replacedValue() {
        let cache = ReadMostlyCache<String, Int>(capacity: 8)
        cache.store(1, for: "key")
        cache.store(2, for: "key")
        #expect(cache.value(for: "key") == 2)
        let found = Mutex<[Int?]>([])
        DispatchQueue.concurrentPerform(iterations: 16) { _ in
            let value = cache.value(for: "key")
            found.withLock { $0.append(value) }
        }
        #expect(found.withLock { $0 } == Array(repeating: 2, count: 16))
    }

    @Test("the whole holds at most its capacity: when full it is emptied and fills again")
    func bounded() {
        let cache = ReadMostlyCache<Int, Int>(capacity: 4)
        for key in 0..<10 { cache.store(key, for: key) }
        #expect(cache.count <= 4)
        #expect(cache.value(for: 9) == 9)
    }
}
