import Foundation
import Synchronization
import Testing

@testable import receipt

/// The batch's pipeline hands results over in item order, holds no more than its window, stops when the consumer
/// fails, and produces the first item alone for a bounded time.
@Suite("Batch pipeline")
struct BatchPipelineTests {
    struct Stop: Error {}

    /// A few microseconds of work that vary from item to item, so that workers finish out of order.
    @Sendable static func uneven(_ index: Int) -> Int {
        usleep(UInt32(index * 7919 % 13) * 50)
        return index
    }

    @Test("every result is consumed once, in item order, though workers finish out of order")
    func inOrder() {
        var consumed: [Int] = []
        BatchPipeline.run(count: 1000, workers: 4, window: 8, producer: { _ in Self.uneven }) { consumed.append($0) }
        #expect(consumed == Array(0..<1000))
    }

    @Test("no more items are taken and not yet consumed than the window holds")
    func windowBounds() {
        let outstanding = Mutex((now: 0, most: 0))
        BatchPipeline.run(
            count: 500, workers: 4, window: 16,
            producer: { _ in
                { index in
                    outstanding.withLock {
                        $0.now += 1; $0.most = max($0.most, $0.now)
                    }
                    return Self.uneven(index)
                }
            },
            consume: { _ in outstanding.withLock { $0.now -= 1 } })
        #expect(outstanding.withLock { $0.most } <= 16)
    }

    @Test("a consumer that throws stops the taking of items and its error comes out")
    func consumerFailure() {
        let produced = Atomic(0)
        #expect(throws: Stop.self) {
            try BatchPipeline.run(
                count: 10_000, workers: 2, window: 16,
                producer: { _ in
                    { index in
                        produced.add(1, ordering: .relaxed)
                        return Self.uneven(index)
                    }
                },
                consume: { (index: Int) throws(Stop) in if index == 100 { throw Stop() } })
        }
        #expect(produced.load(ordering: .relaxed) <= 101 + 16)
    }

    @Test("more workers than items: each item is still produced once and consumed in order")
    func moreWorkersThanItems() {
        var consumed: [Int] = []
        BatchPipeline.run(count: 3, workers: 8, window: 16, producer: { _ in Self.uneven }) { consumed.append($0) }
        #expect(consumed == [0, 1, 2])
    }

    @Test("a window of one item works through them one at a time, in order")
    func windowOfOne() {
        var consumed: [Int] = []
        BatchPipeline.run(count: 50, workers: 4, window: 1, producer: { _ in Self.uneven }) { consumed.append($0) }
        #expect(consumed == Array(0..<50))
    }

    @Test("the first item is produced alone: no other is taken before its result is in")
    func firstItemAlone() {
        let firstDone = Atomic(false)
        let takenEarly = Atomic(0)
        var consumed: [Int] = []
        BatchPipeline.run(
            count: 200, workers: 4, window: 16, leadTime: .seconds(60),
            producer: { _ in
                { index in
                    if index == 0 {
                        usleep(20_000)
                        firstDone.store(true, ordering: .sequentiallyConsistent)
                    } else if !firstDone.load(ordering: .sequentiallyConsistent) {
                        takenEarly.add(1, ordering: .relaxed)
                    }
                    return index
                }
            },
            consume: { consumed.append($0) })
        let early = takenEarly.load(ordering: .relaxed)
        #expect(early == 0)
        #expect(consumed == Array(0..<200))
    }

    @Test("a first item slower than the lead time holds the other workers back no longer than that")
    func leadTimeBound() {
        let secondDone = Atomic(false)
        let firstSawSecond = Atomic(false)
        var consumed: [Int] = []
        BatchPipeline.run(
            count: 50, workers: 2, window: 16, leadTime: .milliseconds(1),
            producer: { _ in
                { index in
                    if index == 0 {
                        // Finishes only once another worker has produced item 1 (or after 10 s, failing the test).
                        for _ in 0..<10_000 where !secondDone.load(ordering: .sequentiallyConsistent) { usleep(1000) }
                        firstSawSecond.store(secondDone.load(ordering: .sequentiallyConsistent), ordering: .relaxed)
                    } else if index == 1 {
                        secondDone.store(true, ordering: .sequentiallyConsistent)
                    }
                    return index
                }
            },
            consume: { consumed.append($0) })
        let sawSecond = firstSawSecond.load(ordering: .relaxed)
        #expect(sawSecond)
        #expect(consumed == Array(0..<50))
    }

    @Test("results are consumed by one worker at a time, never by two at once")
    func oneConsumerAtATime() {
        let inside = Atomic(0)
        let overlapped = Atomic(false)
        var consumed: [Int] = []
        BatchPipeline.run(count: 400, workers: 4, window: 16, producer: { _ in Self.uneven }) { index in
            if inside.add(1, ordering: .sequentiallyConsistent).newValue > 1 {
                overlapped.store(true, ordering: .relaxed)
            }
            if index % 7 == 0 { usleep(200) }
            consumed.append(index)
            inside.subtract(1, ordering: .sequentiallyConsistent)
        }
        let overlap = overlapped.load(ordering: .relaxed)
        #expect(!overlap)
        #expect(consumed == Array(0..<400))
    }

    @Test("the calling thread is worker 0: it makes worker 0's producer and works beside the others")
    func callerIsWorkerZero() {
        let caller = pthread_self()
        let zero = Mutex<pthread_t?>(nil)
        var consumed: [Int] = []
        BatchPipeline.run(
            count: 100, workers: 2, window: 16,
            producer: { worker in
                if worker == 0 { zero.withLock { $0 = pthread_self() } }
                return Self.uneven
            },
            consume: { consumed.append($0) })
        #expect(zero.withLock { $0 } == caller)
        #expect(consumed == Array(0..<100))
    }

    @Test("each worker makes its producer once, on its own thread, and makes its results with it")
    func producerPerWorker() {
        let made = Mutex<[Int: pthread_t]>([:])
        var consumed: [(index: Int, worker: Int)] = []
        BatchPipeline.run(
            count: 300, workers: 3, window: 16,
            producer: { worker in
                made.withLock { $0[worker] = pthread_self() }
                return { index in
                    #expect(made.withLock { $0[worker] } == pthread_self())
                    return (index, worker)
                }
            },
            consume: { consumed.append($0) })
        let workers = made.withLock { $0 }
        #expect(Set(workers.keys) == [0, 1, 2])
        #expect(Set(workers.values.map(UInt.init)).count == 3)
        #expect(consumed.map(\.index) == Array(0..<300))
        #expect(Set(consumed.map(\.worker)).isSubset(of: [0, 1, 2]))
    }
}
