import Foundation
import Synchronization
import Testing

@testable import receipt

/// The batch's pipeline hands results over in item order, holds no more than its window, and stops when the
/// consumer fails.
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
        BatchPipeline.run(count: 1000, workers: 4, window: 8, produce: Self.uneven) { consumed.append($0) }
        #expect(consumed == Array(0..<1000))
    }

    @Test("no more items are taken and not yet consumed than the window holds")
    func windowBounds() {
        let outstanding = Mutex((now: 0, most: 0))
        BatchPipeline.run(
            count: 500, workers: 4, window: 16,
            produce: { index in
                outstanding.withLock {
                    $0.now += 1; $0.most = max($0.most, $0.now)
                }
                return Self.uneven(index)
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
                produce: { index in
                    produced.add(1, ordering: .relaxed)
                    return Self.uneven(index)
                },
                consume: { (index: Int) throws(Stop) in if index == 100 { throw Stop() } })
        }
        #expect(produced.load(ordering: .relaxed) <= 101 + 16)
    }

    @Test("more workers than items: each item is still produced once and consumed in order")
    func moreWorkersThanItems() {
        var consumed: [Int] = []
        BatchPipeline.run(count: 3, workers: 8, window: 16, produce: Self.uneven) { consumed.append($0) }
        #expect(consumed == [0, 1, 2])
    }

    @Test("a window of one item works through them one at a time, in order")
    func windowOfOne() {
        var consumed: [Int] = []
        BatchPipeline.run(count: 50, workers: 4, window: 1, produce: Self.uneven) { consumed.append($0) }
        #expect(consumed == Array(0..<50))
    }
}
