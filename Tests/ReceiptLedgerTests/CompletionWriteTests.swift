import Dispatch
import ReceiptModel
import Synchronization
import Testing

@testable import ReceiptLedger

@Suite("Writes answered through a completion")
struct CompletionWriteTests {
    /// What a completion was given, and on which side of the call's return.
    private final class Completed<Value: Sendable>: Sendable {
        private let result = Mutex<Result<Value, LedgerError>?>(nil)
        private let given = DispatchSemaphore(value: 0)
        private let returned = Mutex(false)
        private let givenBeforeReturn = Mutex(false)

        /// Marks the call that took the completion as returned.
        func callReturned() {
            returned.withLock { $0 = true }
        }

        /// Whether the completion ran before ``callReturned()``.
        var beforeReturn: Bool { givenBeforeReturn.withLock { $0 } }

        func give(_ outcome: Result<Value, LedgerError>) {
            let early = !returned.withLock { $0 }
            givenBeforeReturn.withLock { $0 = early }
            result.withLock { $0 = outcome }
            given.signal()
        }

        /// The result, once the completion has run (at most 10 seconds from now).
        func taken() throws -> Result<Value, LedgerError> {
            try #require(given.wait(timeout: .now() + .seconds(10)) == .success, "the completion never ran")
            return try #require(result.withLock { $0 })
        }
    }

    /// Runs `start` with a completion and returns its result once it has run.
    private func completed<Value: Sendable>(
        _ start: (@escaping @Sendable (Result<Value, LedgerError>) -> Void) -> Void
    ) throws -> (result: Result<Value, LedgerError>, beforeReturn: Bool) {
        let completed = Completed<Value>()
        start { completed.give($0) }
        completed.callReturned()
        let result = try completed.taken()
        return (result, completed.beforeReturn)
    }

    @Test(
        "record with a completion gives created, then already recorded, then the conflict naming the field",
        arguments: StoreKind.allCases)
    func recordOutcomes(_ kind: StoreKind) throws {
        let store = try TestStore(kind)
        let ledger = store.ledger
        let transaction = Sample.minimal()
        #expect(try completed { ledger.record(transaction, completion: $0) }.result.get() == .created(transaction))
        #expect(
            try completed { ledger.record(transaction, completion: $0) }.result.get() == .alreadyRecorded(transaction))
        var other = transaction
        other.customerID = "customer-b"
        let conflict = try completed { ledger.record(other, completion: $0) }.result
        #expect(conflict.failure?.code == .conflict)
        #expect(conflict.failure?.conflictingFields == ["customer_id"])
    }

    @Test(
        "what a completed write stored is read back by the ledger from within its completion",
        arguments: StoreKind.allCases)
    func storedWhenCompleted(_ kind: StoreKind) throws {
        let store = try TestStore(kind)
        let ledger = store.ledger
        let transaction = Sample.minimal()
        let readBack = try completed {
            (completion: @escaping @Sendable (Result<LedgerTransaction?, LedgerError>) -> Void) in
            ledger.record(transaction) { _ in
                completion(
                    Result { () throws(LedgerError) in try ledger.transaction(id: transaction.purchase.transactionID) })
            }
        }
        #expect(try readBack.result.get() == transaction)
    }

    @Test(
        "recordCancellation with a completion gives the cancelled transaction, and not found for an unknown one",
        arguments: StoreKind.allCases)
    func cancellationOutcomes(_ kind: StoreKind) throws {
        let store = try TestStore(kind)
        let ledger = store.ledger
        let transaction = Sample.minimal()
        _ = try ledger.record(transaction)
        let date = ReceiptDate(millisecondsSince1970: 1_717_600_000_000)
        var cancelled = transaction
        cancelled.purchase.cancellationDate = date
        let id = transaction.purchase.transactionID
        #expect(
            try completed { ledger.recordCancellation(transactionID: id, at: date, completion: $0) }.result.get()
                == .created(cancelled))
        let unknown = try completed { ledger.recordCancellation(transactionID: "unknown", at: date, completion: $0) }
        #expect(unknown.result.failure?.code == .notFound)
    }

    @Test(
        "apply with a completion applies every change in one commit, or none when one is refused",
        arguments: StoreKind.allCases)
    func applyOutcomes(_ kind: StoreKind) throws {
        let store = try TestStore(kind)
        let ledger = store.ledger
        let first = Sample.minimal(id: "1")
        let second = Sample.minimal(id: "2")
        let applied = try completed {
            ledger.apply([.record(first), .record(second)], notification: nil, completion: $0)
        }
        #expect(try applied.result.get() == .applied([.recorded(.created(first)), .recorded(.created(second))]))
        var conflicting = first
        conflicting.customerID = "customer-b"
        let third = Sample.minimal(id: "3")
        let refused = try completed {
            ledger.apply([.record(third), .record(conflicting)], notification: nil, completion: $0)
        }
        #expect(refused.result.failure?.code == .conflict)
        #expect(try ledger.transaction(id: "3") == nil)
    }

    @Test("PostgreSQL completes a write on the calling thread, before the call returns")
    func postgreSQLCompletesBeforeReturning() throws {
        let store = try TestStore(.postgreSQL)
        let ledger = store.ledger
        #expect(!ledger.completesWritesInBackground)
        #expect(try completed { ledger.record(Sample.minimal(), completion: $0) }.beforeReturn)
    }

    @Test("SQLite returns while another connection holds the file's lock, and completes the write once committed")
    func sqliteCompletesInBackground() throws {
        let directory = try TemporaryDirectory()
        let ledger = try SQLiteLedger(path: directory.path())
        #expect(ledger.completesWritesInBackground)
        let lock = try WriteLock(path: directory.path())
        let completed = Completed<LedgerRecordOutcome>()
        ledger.record(Sample.minimal()) { completed.give($0) }
        completed.callReturned()
        try waitUntil(ledger, hasWaiting: 1)
        #expect(try ledger.transaction(id: Sample.minimal().purchase.transactionID) == nil)
        try lock.release()
        #expect(try completed.taken().get() == .created(Sample.minimal()))
        #expect(!completed.beforeReturn)
    }
}
