import ReceiptLedger
import ReceiptModel
import Testing

@Suite("Listing and counting transactions")
struct QueryTests {

    @Test(
        "a customer's transactions for an app are ordered by purchase date, then by transaction id",
        arguments: StoreKind.allCases)
    func ordering(_ kind: StoreKind) throws {
        let store = try TestStore(kind)
        let ledger = store.ledger
        let expected = [
            Sample.minimal(id: "9", purchasedAt: 1_000),
            Sample.full(id: "10", purchasedAt: 2_000),
            Sample.minimal(id: "11", purchasedAt: 2_000),
            Sample.full(id: "2", purchasedAt: 2_000),
            Sample.minimal(id: "1", purchasedAt: 2_001),
        ]
        for transaction in [expected[4], expected[2], expected[0], expected[3], expected[1]] {
            _ = try ledger.record(transaction)
        }
        #expect(try ledger.transactions(customerID: "customer-a", bundleID: Sample.bundleID) == expected)
    }

    @Test("another customer's or another app's transactions are not listed", arguments: StoreKind.allCases)
    func isolation(_ kind: StoreKind) throws {
        let store = try TestStore(kind)
        let ledger = store.ledger
        let mine = Sample.full(id: "1")
        _ = try ledger.record(mine)
        _ = try ledger.record(Sample.full(id: "2", customerID: "customer-b"))
        _ = try ledger.record(Sample.full(id: "3", bundleID: "com.example.other"))
        #expect(try ledger.transactions(customerID: "customer-a", bundleID: Sample.bundleID) == [mine])
        #expect(try ledger.transactions(customerID: "customer-c", bundleID: Sample.bundleID).isEmpty)
    }

    @Test(
        "count is the number of distinct transactions stored, replays and conflicts not counted",
        arguments: StoreKind.allCases)
    func count(_ kind: StoreKind) throws {
        let store = try TestStore(kind)
        let ledger = store.ledger
        #expect(try ledger.count() == 0)
        for id in ["1", "2", "3"] {
            _ = try ledger.record(Sample.full(id: id))
        }
        _ = try ledger.record(Sample.full(id: "2"))
        _ = #expect(throws: LedgerError.self) { try ledger.record(Sample.full(id: "3", customerID: "customer-b")) }
        #expect(try ledger.count() == 3)
    }
}
