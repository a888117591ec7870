import Foundation
import ReceiptLedger
import ReceiptModel
import Synchronization
import Testing

@Suite("Concurrent use")
struct ConcurrencyTests {
    /// What the threads saw, by kind.
    final class Tally: Sendable {
        struct Counts {
            var created = 0
            var alreadyRecorded = 0
            var customerConflicts = 0
            var unexpected: [String] = []
        }

        let counts = Mutex(Counts())
    }

    @Test(
        "8 threads on two ledgers of one store recording 200 transactions each, some ids shared, store each id once and fail only on conflicts",
        arguments: StoreKind.allCases)
    func eightThreads(_ kind: StoreKind) throws {
        let threads = 8
        let perThread = 200
        let store = try TestStore(kind)
        // Two ledgers on the same storage, as two processes would have: what orders their writes is the store.
        let ledgers = [store.ledger, try store.open()]
        let tally = Tally()
        let group = DispatchGroup()
        for thread in 0..<threads {
            group.enter()
            Thread.detachNewThread {
                defer { group.leave() }
                for index in 0..<perThread {
                    // A quarter of the ids are recorded identically by every thread, a quarter by every thread
                    // for a customer of its own (so all but the first conflict), and half by this thread only.
                    let transaction =
                        switch index % 4 {
                        case 0: Sample.full(id: "shared-\(index)")
                        case 1: Sample.full(id: "contested-\(index)", customerID: "customer-\(thread)")
                        default: Sample.full(id: "thread-\(thread)-\(index)")
                        }
                    do throws(LedgerError) {
                        switch try ledgers[thread % 2].record(transaction) {
                        case .created: tally.counts.withLock { $0.created += 1 }
                        case .alreadyRecorded: tally.counts.withLock { $0.alreadyRecorded += 1 }
                        }
                    } catch {
                        let expected = error.code == .conflict && error.conflictingFields == ["customer_id"]
                        tally.counts.withLock { counts in
                            if expected {
                                counts.customerConflicts += 1
                            } else {
                                counts.unexpected.append(error.description)
                            }
                        }
                    }
                }
            }
        }
        group.wait()
        let counts = tally.counts.withLock { $0 }
        let sharedIDs = perThread / 4
        let ownIDs = threads * perThread / 2
        #expect(counts.unexpected == [])
        #expect(counts.created == 2 * sharedIDs + ownIDs)
        #expect(counts.alreadyRecorded == sharedIDs * (threads - 1))
        #expect(counts.customerConflicts == sharedIDs * (threads - 1))
        #expect(try ledgers[0].count() == 2 * sharedIDs + ownIDs)
        #expect(try store.integrityCheck(ledgers[1]) == ["ok"])
    }
}
