import Foundation
import ReceiptModel
import Testing

@testable import ReceiptLedger

/// A reading connection of ``SQLiteLedger`` keeps its read transaction open from one read to the next while it
/// still shows every write the ledger has acknowledged: what a read may and may not miss.
@Suite("Read transactions kept between reads")
struct ReadSnapshotTests {
    let directory: TemporaryDirectory

    init() throws {
        directory = try TemporaryDirectory()
    }

    @Test("a read after an acknowledged write sees it, though the reader kept the state it read before the write")
    func readsSeeAcknowledgedWrites() throws {
        let ledger = try SQLiteLedger(path: directory.path())
        defer { ledger.close() }
        for index in 0..<50 {
            let transaction = Sample.full(id: "read-after-write-\(index)")
            #expect(try ledger.transaction(id: transaction.purchase.transactionID) == nil)
            #expect(try ledger.transaction(withAnyOf: ["other", transaction.purchase.transactionID]) == nil)
            _ = try ledger.record(transaction)
            #expect(try ledger.transaction(id: transaction.purchase.transactionID) == transaction)
            #expect(try ledger.count() == index + 1)
        }
    }

    @Test("reads racing with commits on other threads never miss a write acknowledged before they began")
    func readsRacingWithCommits() async throws {
        let ledger = try SQLiteLedger(path: directory.path())
        defer { ledger.close() }
        let writes = 1_000
        let stop = Stopwatch()
        // Two threads keep reading (and returning their connections) while the test writes and reads back.
        let readers = (0..<2).map { index in
            Thread {
                while !stop.isDone {
                    _ = try? ledger.transaction(withAnyOf: ["busy-\(index)", "race-0"])
                }
                stop.finished()
            }
        }
        readers.forEach { $0.start() }
        defer {
            stop.done()
            stop.waitForFinished(count: readers.count)
        }
        for index in 0..<writes {
            let transaction = Sample.full(id: "race-\(index)")
            _ = try ledger.record(transaction)
            #expect(try ledger.transaction(id: transaction.purchase.transactionID) == transaction, "write \(index)")
        }
    }

    @Test("a write by another ledger on the same file is seen once the reader's snapshot lifetime has passed")
    func otherWritersAreSeenWithinTheLifetime() throws {
        let reader = try SQLiteLedger(path: directory.path())
        let writer = try SQLiteLedger(path: directory.path())
        defer {
            reader.close()
            writer.close()
        }
        let transaction = Sample.full()
        #expect(try reader.transaction(id: transaction.purchase.transactionID) == nil)
        _ = try writer.record(transaction)
        let deadline = ContinuousClock.now + SQLiteLedger.snapshotLifetime
        while ContinuousClock.now < deadline {
            Thread.sleep(forTimeInterval: 0.001)
        }
        #expect(try reader.transaction(id: transaction.purchase.transactionID) == transaction)
    }

    @Test("the snapshot an idle reader keeps ends at the next commit, so checkpoints reuse the WAL: it stays small")
    func idleSnapshotsDoNotHoldTheLog() throws {
        let ledger = try SQLiteLedger(path: directory.path())
        defer { ledger.close() }
        // One read leaves a reader idle in the pool with its snapshot; then commits of about 16 KiB of pages each,
        // 12 MiB in all, three times SQLite's checkpoint threshold (1,000 pages, 4 MiB). A log that could not be
        // reset from the start would hold them all.
        _ = try ledger.transaction(id: "none")
        for index in 0..<800 {
            _ = try ledger.record(Sample.full(id: "wal-\(index)", customerID: "customer-\(index % 50)"))
        }
        let attributes = try FileManager.default.attributesOfItem(atPath: directory.path("ledger.sqlite-wal"))
        let size = try #require(attributes[.size] as? Int)
        #expect(size < 8 << 20, "the WAL holds \(size) bytes")
    }
}

/// Tells threads of a test when to stop, and lets the test wait until they have.
private final class Stopwatch: @unchecked Sendable {
    private let condition = NSCondition()
    private var stopping = false
    private var finishedCount = 0

    var isDone: Bool { condition.withLock { stopping } }

    func done() { condition.withLock { stopping = true } }

    func finished() {
        condition.withLock {
            finishedCount += 1
            condition.broadcast()
        }
    }

    /// Waits (at most 30 s) until `count` threads have finished.
    func waitForFinished(count: Int) {
        condition.withLock {
            let deadline = Date(timeIntervalSinceNow: 30)
            while finishedCount < count && condition.wait(until: deadline) {}
        }
    }
}
