import Foundation
import Synchronization
import Testing

@testable import receipt

/// The batch's pipeline hands results over in item order, holds no more than its window, stops when the consumer
/// fails, and produces the first item alone for a bounded time. Each run is bounded in time (``bounded(_:)``), so a
/// pipeline that deadlocks fails its test instead of hanging the suite.
@Suite("Batch pipeline")
struct BatchPipelineTests {
    struct Stop: Error {}
    struct TimedOut: Error {}

    /// What `body` returns, run on a thread of its own; throws ``TimedOut`` when it has not returned within 60 s
    /// (every run here takes well under a second).
    static func bounded<Value: Sendable>(_ body: @escaping @Sendable () -> Value) throws -> Value {
        let result = Mutex<Value?>(nil)
        let done = DispatchSemaphore(value: 0)
        Thread.detachNewThread {
            let value = body()
            result.withLock { $0 = value }
            done.signal()
        }
        guard done.wait(timeout: .now() + 60) == .success, let value = result.withLock({ $0 }) else {
            throw TimedOut()
        }
        return value
    }

    /// A few microseconds of work that vary from item to item, so that workers finish out of order.
    @Sendable static func uneven(_ index: Int) -> Int {
        usleep(UInt32(index * 7919 % 13) * 50)
        return index
    }

    @Test("every result is consumed once, in item order, though workers finish out of order")
    func inOrder() throws {
        let consumed = try Self.bounded {
            var consumed: [Int] = []
            BatchPipeline.run(count: 1000, workers: 4, window: 8, producer: { _ in Self.uneven }) {
                consumed.append($0)
            }
            return consumed
        }
        #expect(consumed == Array(0..<1000))
    }

    @Test("no more items are taken and not yet consumed than the window holds")
    func windowBounds() throws {
        let most = try Self.bounded {
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
            return outstanding.withLock { $0.most }
        }
        #expect(most <= 16)
    }

    @Test("a consumer that throws stops the taking of items and its error comes out")
    func consumerFailure() throws {
        let (stopped, produced) = try Self.bounded {
            let produced = Atomic(0)
            var stopped = false
            do {
                try BatchPipeline.run(
                    count: 10_000, workers: 2, window: 16,
                    producer: { _ in
                        { index in
                            produced.add(1, ordering: .relaxed)
                            return Self.uneven(index)
                        }
                    },
                    consume: { (index: Int) throws(Stop) in if index == 100 { throw Stop() } })
            } catch {
                stopped = true
            }
            return (stopped, produced.load(ordering: .relaxed))
        }
        #expect(stopped)
        #expect(produced <= 101 + 16)
    }

    @Test("more workers than items: each item is still produced once and consumed in order")
    func moreWorkersThanItems() throws {
        let consumed = try Self.bounded {
            var consumed: [Int] = []
            BatchPipeline.run(count: 3, workers: 8, window: 16, producer: { _ in Self.uneven }) { consumed.append($0) }
            return consumed
        }
        #expect(consumed == [0, 1, 2])
    }

    @Test("a window of one item works through them one at a time, in order")
    func windowOfOne() throws {
        let consumed = try Self.bounded {
            var consumed: [Int] = []
            BatchPipeline.run(count: 50, workers: 4, window: 1, producer: { _ in Self.uneven }) { consumed.append($0) }
            return consumed
        }
        #expect(consumed == Array(0..<50))
    }

    @Test("the first item is produced alone: no other is taken before its result is in")
    func firstItemAlone() throws {
        let (early, consumed) = try Self.bounded {
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
            return (takenEarly.load(ordering: .relaxed), consumed)
        }
        #expect(early == 0)
        #expect(consumed == Array(0..<200))
    }

    @Test("worker 0 makes the first item, and the others make their producers only once its result is in")
    func producersAfterTheFirstResult() throws {
        let (firstBy, early, producers) = try Self.bounded {
            let firstDone = Atomic(false)
            let madeEarly = Atomic(0)
            let made = Atomic(0)
            let firstBy = Atomic(-1)
            BatchPipeline.run(
                count: 100, workers: 3, window: 16, leadTime: .seconds(60),
                producer: { worker in
                    made.add(1, ordering: .relaxed)
                    if worker > 0 && !firstDone.load(ordering: .sequentiallyConsistent) {
                        madeEarly.add(1, ordering: .relaxed)
                    }
                    return { index in
                        if index == 0 {
                            firstBy.store(worker, ordering: .relaxed)
                            usleep(20_000)
                            firstDone.store(true, ordering: .sequentiallyConsistent)
                        }
                        return index
                    }
                },
                consume: { _ in })
            return (firstBy.load(ordering: .relaxed), madeEarly.load(ordering: .relaxed), made.load(ordering: .relaxed))
        }
        #expect(firstBy == 0)
        #expect(early == 0)
        #expect(producers == 3)
    }

    @Test("a first item slower than the lead time holds the other workers back no longer than that")
    func leadTimeBound() throws {
        let (sawSecond, consumed) = try Self.bounded {
            let secondDone = Atomic(false)
            let firstSawSecond = Atomic(false)
            var consumed: [Int] = []
            BatchPipeline.run(
                count: 50, workers: 2, window: 16, leadTime: .milliseconds(1),
                producer: { _ in
                    { index in
                        if index == 0 {
                            // Finishes only once another worker has produced item 1 (or after 10 s, failing the test).
                            for _ in 0..<10_000 where !secondDone.load(ordering: .sequentiallyConsistent) {
                                usleep(1000)
                            }
                            firstSawSecond.store(
                                secondDone.load(ordering: .sequentiallyConsistent), ordering: .relaxed)
                        } else if index == 1 {
                            secondDone.store(true, ordering: .sequentiallyConsistent)
                        }
                        return index
                    }
                },
                consume: { consumed.append($0) })
            return (firstSawSecond.load(ordering: .relaxed), consumed)
        }
        #expect(sawSecond)
        #expect(consumed == Array(0..<50))
    }

    @Test("results are consumed by one worker at a time, never by two at once")
    func oneConsumerAtATime() throws {
        let (overlap, consumed) = try Self.bounded {
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
            return (overlapped.load(ordering: .relaxed), consumed)
        }
        #expect(!overlap)
        #expect(consumed == Array(0..<400))
    }

    @Test("the calling thread is worker 0: it makes worker 0's producer and works beside the others")
    func callerIsWorkerZero() throws {
        let (caller, zero, consumed) = try Self.bounded {
            let zero = Mutex<pthread_t?>(nil)
            var consumed: [Int] = []
            BatchPipeline.run(
                count: 100, workers: 2, window: 16,
                producer: { worker in
                    if worker == 0 { zero.withLock { $0 = pthread_self() } }
                    return Self.uneven
                },
                consume: { consumed.append($0) })
            return (pthread_self(), zero.withLock { $0 }, consumed)
        }
        #expect(zero == caller)
        #expect(consumed == Array(0..<100))
    }

    @Test("each worker makes its producer once, on its own thread, and makes its results with it")
    func producerPerWorker() throws {
        let (workers, elsewhere, consumed) = try Self.bounded {
            let made = Mutex<[Int: pthread_t]>([:])
            let madeElsewhere = Atomic(0)
            var consumed: [(index: Int, worker: Int)] = []
            BatchPipeline.run(
                count: 300, workers: 3, window: 16,
                producer: { worker in
                    made.withLock { $0[worker] = pthread_self() }
                    return { index in
                        if made.withLock({ $0[worker] }) != pthread_self() { madeElsewhere.add(1, ordering: .relaxed) }
                        return (index, worker)
                    }
                },
                consume: { consumed.append($0) })
            return (made.withLock { $0 }, madeElsewhere.load(ordering: .relaxed), consumed)
        }
        #expect(elsewhere == 0)
        #expect(Set(workers.keys) == [0, 1, 2])
        #expect(Set(workers.values.map(UInt.init)).count == 3)
        #expect(consumed.map(\.index) == Array(0..<300))
        #expect(Set(consumed.map(\.worker)).isSubset(of: [0, 1, 2]))
    }
}
