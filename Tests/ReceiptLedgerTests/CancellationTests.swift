import ReceiptLedger
import ReceiptModel
import Testing

@Suite("Recording cancellations")
struct CancellationTests {
    let transaction = Sample.full()
    let refundDate = ReceiptDate(millisecondsSince1970: 1_718_000_000_456)

    /// Fresh storage of `kind` holding `transaction`, not cancelled.
    private func storeHoldingTransaction(_ kind: StoreKind) throws -> TestStore {
        let store = try TestStore(kind)
        _ = try store.ledger.record(transaction)
        return store
    }

    private var cancelled: LedgerTransaction {
        var cancelled = transaction
        cancelled.purchase.cancellationDate = refundDate
        return cancelled
    }

    @Test("a cancellation is stored and returned as created", arguments: StoreKind.allCases)
    func recorded(_ kind: StoreKind) throws {
        let store = try storeHoldingTransaction(kind)
        let ledger = store.ledger
        let id = transaction.purchase.transactionID
        #expect(try ledger.recordCancellation(transactionID: id, at: refundDate) == .created(cancelled))
        #expect(try ledger.transaction(id: id) == cancelled)
    }

    @Test("the same cancellation again returns alreadyRecorded", arguments: StoreKind.allCases)
    func replayed(_ kind: StoreKind) throws {
        let store = try storeHoldingTransaction(kind)
        let ledger = store.ledger
        let id = transaction.purchase.transactionID
        _ = try ledger.recordCancellation(transactionID: id, at: refundDate)
        #expect(try ledger.recordCancellation(transactionID: id, at: refundDate) == .alreadyRecorded(cancelled))
    }

    @Test(
        "a cancellation at another date conflicts on cancellation_date and keeps the first",
        arguments: StoreKind.allCases)
    func conflictingDate(_ kind: StoreKind) throws {
        let store = try storeHoldingTransaction(kind)
        let ledger = store.ledger
        let id = transaction.purchase.transactionID
        _ = try ledger.recordCancellation(transactionID: id, at: refundDate)
        let later = ReceiptDate(millisecondsSince1970: refundDate.millisecondsSince1970 + 1)
        let error = #expect(throws: LedgerError.self) { try ledger.recordCancellation(transactionID: id, at: later) }
        #expect(error?.code == .conflict)
        #expect(error?.conflictingFields == ["cancellation_date"])
        #expect(try ledger.transaction(id: id) == cancelled)
    }

    @Test("cancelling an id that was never recorded throws notFound", arguments: StoreKind.allCases)
    func unknownID(_ kind: StoreKind) throws {
        let store = try storeHoldingTransaction(kind)
        let ledger = store.ledger
        let error = #expect(throws: LedgerError.self) {
            _ = try ledger.recordCancellation(transactionID: "no-such-id", at: refundDate)
        }
        #expect(error?.code == .notFound)
        #expect(try ledger.count() == 1)
    }

    @Test(
        "recording a cancelled transaction again is alreadyRecorded, whatever cancellation date it carries",
        arguments: StoreKind.allCases)
    func recordAfterCancellation(_ kind: StoreKind) throws {
        let store = try storeHoldingTransaction(kind)
        let ledger = store.ledger
        _ = try ledger.recordCancellation(transactionID: transaction.purchase.transactionID, at: refundDate)
        #expect(try ledger.record(transaction) == .alreadyRecorded(cancelled))
        var otherDate = transaction
        otherDate.purchase.cancellationDate = ReceiptDate(millisecondsSince1970: 1)
        #expect(try ledger.record(otherDate) == .alreadyRecorded(cancelled))
    }
}
