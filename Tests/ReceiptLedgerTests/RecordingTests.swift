import ReceiptLedger
import ReceiptModel
import Testing

@Suite("Recording transactions")
struct RecordingTests {

    @Test(
        "a transaction with every field set reads back equal, 64-bit ids and millisecond dates included",
        arguments: StoreKind.allCases)
    func everyField(_ kind: StoreKind) throws {
        let store = try TestStore(kind)
        let ledger = store.ledger
        let transaction = Sample.full()
        #expect(try ledger.record(transaction) == .created(transaction))
        #expect(try ledger.transaction(id: transaction.purchase.transactionID) == transaction)
    }

    @Test("a transaction whose optional fields are all nil reads back with them nil", arguments: StoreKind.allCases)
    func nilFields(_ kind: StoreKind) throws {
        let store = try TestStore(kind)
        let ledger = store.ledger
        let transaction = Sample.minimal()
        #expect(try ledger.record(transaction) == .created(transaction))
        let stored = try ledger.transaction(id: transaction.purchase.transactionID)
        #expect(stored == transaction)
        #expect(stored?.purchase.quantity == nil)
        #expect(stored?.purchase.isTrialPeriod == nil)
    }

    @Test(
        "an appAccountToken is stored and read back wherever transactions are read", arguments: StoreKind.allCases)
    func appAccountTokenReadBack(_ kind: StoreKind) throws {
        let store = try TestStore(kind)
        let ledger = try #require(store.ledger as? any LedgerStore)
        let transaction = Sample.full()
        _ = try ledger.record(transaction)
        let id = transaction.purchase.transactionID
        #expect(try ledger.transaction(id: id) == transaction)
        #expect(try ledger.transaction(withAnyOf: ["none", id]) == transaction)
        #expect(try ledger.transactions(customerID: transaction.customerID, bundleID: Sample.bundleID) == [transaction])
        #expect(try ledger.transactions(after: nil, limit: 10) == [transaction])
    }

    @Test(
        "a ledger of the previous schema migrates: its rows read back without appAccountToken, new ones keep theirs",
        arguments: StoreKind.allCases)
    func appAccountTokenMigration(_ kind: StoreKind) throws {
        let store = try TestStore(kind)
        _ = try store.ledger.record(Sample.fullWithoutToken)
        try store.rewindToPreviousSchema()
        let migrated = try store.open()
        #expect(try migrated.transaction(id: Sample.full().purchase.transactionID) == Sample.fullWithoutToken)
        let new = Sample.full(id: "2000000123456790")
        #expect(try migrated.record(new) == .created(new))
        #expect(try store.integrityCheck(migrated) == ["ok"])
    }

    @Test("an id that was never recorded reads as nil", arguments: StoreKind.allCases)
    func unknownID(_ kind: StoreKind) throws {
        let store = try TestStore(kind)
        let ledger = store.ledger
        _ = try ledger.record(Sample.full())
        #expect(try ledger.transaction(id: "no-such-id") == nil)
    }

    @Test("looking up several ids finds the stored one that comes first among them", arguments: StoreKind.allCases)
    func anyOfIDs(_ kind: StoreKind) throws {
        let store = try TestStore(kind)
        let ledger = store.ledger
        let second = Sample.full(id: "2")
        let third = Sample.minimal(id: "3")
        _ = try ledger.record(third)
        _ = try ledger.record(second)
        #expect(try ledger.transaction(withAnyOf: ["1", "2", "3"]) == second)
        #expect(try ledger.transaction(withAnyOf: ["1", "4"]) == nil)
        #expect(try ledger.transaction(withAnyOf: []) == nil)
    }

    @Test(
        "recording the same transaction again returns alreadyRecorded with the stored one",
        arguments: StoreKind.allCases)
    func idempotentReplay(_ kind: StoreKind) throws {
        let store = try TestStore(kind)
        let ledger = store.ledger
        let transaction = Sample.full()
        _ = try ledger.record(transaction)
        #expect(try ledger.record(transaction) == .alreadyRecorded(transaction))
        #expect(try ledger.count() == 1)
    }

    @Test(
        "a cancellation date and unknown attributes on a recorded transaction are not stored",
        arguments: StoreKind.allCases)
    func ignoredFields(_ kind: StoreKind) throws {
        let store = try TestStore(kind)
        let ledger = store.ledger
        var transaction = Sample.full()
        transaction.purchase.cancellationDate = ReceiptDate(millisecondsSince1970: 1_718_000_000_000)
        transaction.purchase.unknownAttributes = [ReceiptAttribute(type: 1799, version: 1, value: [0x01])]
        let expected = Sample.full()
        #expect(try ledger.record(transaction) == .created(expected))
        #expect(try ledger.transaction(id: expected.purchase.transactionID) == expected)
    }

    @Test(
        "a different transaction with a recorded id conflicts, naming exactly the differing fields",
        arguments: StoreKind.allCases, Conflict.all)
    func conflict(_ kind: StoreKind, _ conflict: Conflict) throws {
        let store = try TestStore(kind)
        let ledger = store.ledger
        let stored = Sample.full()
        _ = try ledger.record(stored)
        var candidate = stored
        conflict.change(&candidate)
        let error = #expect(throws: LedgerError.self) { try ledger.record(candidate) }
        #expect(error?.code == .conflict)
        #expect(error?.conflictingFields == conflict.fields)
        #expect(try ledger.transaction(id: stored.purchase.transactionID) == stored)
    }
}

/// One way of changing a recorded transaction, and the fields a conflict must name for it.
struct Conflict: Sendable, CustomTestStringConvertible {
    let testDescription: String
    let fields: [String]
    let change: @Sendable (inout LedgerTransaction) -> Void

    static let all: [Conflict] = [
        Conflict(testDescription: "another customer", fields: ["customer_id"]) { $0.customerID = "customer-b" },
        Conflict(testDescription: "another app", fields: ["bundle_id"]) { $0.bundleID = "com.example.other" },
        Conflict(testDescription: "another appAccountToken", fields: ["app_account_token"]) {
            $0.appAccountToken = "7e3fb20b-4cdb-47cc-936d-99d65f608139"
        },
        Conflict(testDescription: "product and quantity", fields: ["product_id", "quantity"]) {
            $0.purchase.productID = "com.example.app.premium.yearly"
            $0.purchase.quantity = 1
        },
        Conflict(testDescription: "a millisecond later", fields: ["purchase_date", "expires_date"]) {
            $0.purchase.purchaseDate = ReceiptDate(millisecondsSince1970: 1_717_588_800_124)
            $0.purchase.expiresDate = ReceiptDate(millisecondsSince1970: 1_720_180_801_000)
        },
        Conflict(
            testDescription: "values set to nil",
            fields: [
                "original_transaction_id", "original_purchase_date", "is_trial_period", "promotional_offer_id",
                "app_account_token",
            ]
        ) {
            $0.purchase.originalTransactionID = nil
            $0.purchase.originalPurchaseDate = nil
            $0.purchase.isTrialPeriod = nil
            $0.purchase.promotionalOfferID = nil
            $0.appAccountToken = nil
        },
        Conflict(
            testDescription: "the low bit of 64-bit numbers",
            fields: ["product_type", "web_order_line_item_id", "is_in_intro_offer_period"]
        ) {
            $0.purchase.productType = 2
            $0.purchase.webOrderLineItemID = 9_007_199_254_740_992
            $0.purchase.isInIntroOfferPeriod = true
        },
        Conflict(testDescription: "a canonically equivalent but different string", fields: ["promotional_offer_id"]) {
            $0.purchase.promotionalOfferID = "spring-offer-u\u{308}"
        },
        Conflict(
            testDescription: "every compared field",
            fields: [
                "customer_id", "bundle_id", "product_id", "quantity", "original_transaction_id", "purchase_date",
                "original_purchase_date", "product_type", "expires_date", "web_order_line_item_id", "is_trial_period",
                "is_in_intro_offer_period", "promotional_offer_id", "app_account_token",
            ]
        ) {
            $0 = Sample.minimal(id: $0.purchase.transactionID, customerID: "customer-b", bundleID: "com.example.other")
            $0.purchase.quantity = 2
            $0.purchase.originalTransactionID = "other"
            $0.purchase.originalPurchaseDate = ReceiptDate(millisecondsSince1970: 0)
            $0.purchase.productType = 0
            $0.purchase.expiresDate = ReceiptDate(millisecondsSince1970: 0)
            $0.purchase.webOrderLineItemID = 0
            $0.purchase.isTrialPeriod = false
            $0.purchase.isInIntroOfferPeriod = true
            $0.purchase.promotionalOfferID = "other"
        },
    ]
}
