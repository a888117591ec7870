import Foundation
import ReceiptModel
import Testing

@testable import ReceiptLedger

/// Renewal info, notifications, withdrawn refunds, changes applied in one commit and placeholder customers.
@Suite("Customer state")
struct CustomerStateTests {
    static let refund = ReceiptDate(millisecondsSince1970: 1_718_000_000_000)

    static func renewal(signedAt milliseconds: Int64, product: String = "monthly") -> LedgerRenewalInfo {
        LedgerRenewalInfo(
            originalTransactionID: "2000000000000001", bundleID: Sample.bundleID, productID: product,
            autoRenewProductID: "yearly", autoRenews: true, expirationIntent: 2, isInBillingRetryPeriod: false,
            gracePeriodExpiresDate: ReceiptDate(millisecondsSince1970: -5), priceIncreaseStatus: 1,
            signedDate: ReceiptDate(millisecondsSince1970: milliseconds))
    }

    static func notification(_ uuid: String, receivedAt milliseconds: Int64 = 1_000) -> LedgerNotification {
        LedgerNotification(
            notificationUUID: uuid, notificationType: "REFUND", subtype: nil, bundleID: Sample.bundleID,
            signedDate: ReceiptDate(millisecondsSince1970: milliseconds - 1),
            receivedDate: ReceiptDate(millisecondsSince1970: milliseconds), customerID: "customer-a",
            transactionID: "2000000123456789", originalTransactionID: "2000000000000001",
            effects: ["ignored"], signedPayload: "eyJ.payload-\(uuid).sig")
    }

    /// `transaction` for the placeholder customer of its original transaction.
    static func placeholder(_ transaction: LedgerTransaction) -> LedgerTransaction {
        var unknown = transaction
        unknown.customerID = "apple:" + (transaction.purchase.originalTransactionID ?? "")
        return unknown
    }

    @Test("withdrawing a refund clears it once; again it is already so", arguments: StoreKind.allCases)
    func withdrawIsIdempotent(_ kind: StoreKind) throws {
        let store = try TestStore(kind)
        let ledger = store.ledger
        let transaction = Sample.full()
        let id = transaction.purchase.transactionID
        _ = try ledger.record(transaction)
        _ = try ledger.recordCancellation(transactionID: id, at: Self.refund)
        #expect(try ledger.withdrawCancellation(transactionID: id) == .created(transaction))
        #expect(try ledger.withdrawCancellation(transactionID: id) == .alreadyRecorded(transaction))
        #expect(try ledger.transaction(id: id) == transaction)
    }

    /// `transaction` with its expiry moved by `days`.
    static func expiring(_ transaction: LedgerTransaction, movedBy days: Int64) -> LedgerTransaction {
        var moved = transaction
        moved.purchase.expiresDate = transaction.purchase.expiresDate.map {
            ReceiptDate(millisecondsSince1970: $0.millisecondsSince1970 + days * 86_400_000)
        }
        return moved
    }

    @Test(
        "extending records a new transaction as recording does; a later expiry moves the stored one, once",
        arguments: StoreKind.allCases)
    func extendMovesExpiryLater(_ kind: StoreKind) throws {
        let store = try TestStore(kind)
        let ledger = store.ledger
        let transaction = Sample.full()
        #expect(try ledger.apply([.extend(transaction)]) == [.recorded(.created(transaction))])
        let extended = Self.expiring(transaction, movedBy: 7)
        let from = try #require(transaction.purchase.expiresDate)
        #expect(try ledger.apply([.extend(extended)]) == [.expiryExtended(extended, from: from)])
        #expect(try ledger.apply([.extend(extended)]) == [.recorded(.alreadyRecorded(extended))])
        #expect(try ledger.transaction(id: transaction.purchase.transactionID) == extended)
    }

    @Test(
        "an extension delivered after a later one keeps the later expiry: out of order ends at the latest",
        arguments: StoreKind.allCases)
    func extendNeverShortens(_ kind: StoreKind) throws {
        let store = try TestStore(kind)
        let ledger = store.ledger
        let transaction = Sample.full()
        let latest = Self.expiring(transaction, movedBy: 14)
        _ = try ledger.apply([.extend(latest)])
        #expect(
            try ledger.apply([.extend(Self.expiring(transaction, movedBy: 7))]) == [.recorded(.alreadyRecorded(latest))]
        )
        #expect(try ledger.apply([.extend(transaction)]) == [.recorded(.alreadyRecorded(latest))])
        #expect(try ledger.transaction(id: transaction.purchase.transactionID) == latest)
    }

    @Test(
        "extending a transaction stored with another field different is a conflict naming it, and moves nothing",
        arguments: StoreKind.allCases)
    func extendConflictsOnOtherFields(_ kind: StoreKind) throws {
        let store = try TestStore(kind)
        let ledger = store.ledger
        let transaction = Sample.full()
        _ = try ledger.record(transaction)
        var other = Self.expiring(transaction, movedBy: 7)
        other.purchase.quantity = 1
        let error = #expect(throws: LedgerError.self) { try ledger.apply([.extend(other)]) }
        #expect(error?.code == .conflict)
        #expect(error?.conflictingFields == ["quantity"])
        #expect(try ledger.transaction(id: transaction.purchase.transactionID) == transaction)
    }

    @Test(
        "plain recording still refuses a moved expiry: only Apple's signed data extends", arguments: StoreKind.allCases)
    func recordRefusesMovedExpiry(_ kind: StoreKind) throws {
        let store = try TestStore(kind)
        let ledger = store.ledger
        let transaction = Sample.full()
        _ = try ledger.record(transaction)
        let error = #expect(throws: LedgerError.self) { try ledger.record(Self.expiring(transaction, movedBy: 7)) }
        #expect(error?.conflictingFields == ["expires_date"])
    }

    @Test(
        "Apple's transaction for the placeholder goes to the customer already known for its original transaction",
        arguments: StoreKind.allCases)
    func extendResolvesPlaceholder(_ kind: StoreKind) throws {
        let store = try TestStore(kind)
        let ledger = store.ledger
        let first = Sample.full()
        _ = try ledger.record(first)
        let renewal = Self.placeholder(Sample.full(id: "2000000123456790", purchasedAt: 1_720_180_800_999))
        var owned = renewal
        owned.customerID = first.customerID
        #expect(try ledger.apply([.extend(renewal)]) == [.recorded(.created(owned))])
        #expect(try ledger.apply([.extend(Self.placeholder(first))]) == [.recorded(.alreadyRecorded(first))])
        #expect(try ledger.transactions(customerID: "apple:2000000000000001", bundleID: Sample.bundleID).isEmpty)
    }

    @Test(
        "a new transaction of a known customer takes the placeholder's transactions of its original transaction",
        arguments: StoreKind.allCases)
    func extendAdoptsPlaceholderRows(_ kind: StoreKind) throws {
        let store = try TestStore(kind)
        let ledger = store.ledger
        let first = Sample.full()
        _ = try ledger.record(Self.placeholder(first))
        let renewal = Sample.full(id: "2000000123456790", purchasedAt: 1_720_180_800_999)
        #expect(try ledger.apply([.extend(renewal)]) == [.recorded(.created(renewal))])
        #expect(try ledger.transactions(customerID: first.customerID, bundleID: Sample.bundleID).count == 2)
        #expect(try ledger.transaction(id: first.purchase.transactionID) == first)
    }

    @Test(
        "recording for the placeholder a transaction a known customer holds is already recorded, not a conflict",
        arguments: StoreKind.allCases)
    func placeholderOverKnownCustomer(_ kind: StoreKind) throws {
        let store = try TestStore(kind)
        let ledger = store.ledger
        let transaction = Sample.full()
        _ = try ledger.record(transaction)
        #expect(try ledger.record(Self.placeholder(transaction)) == .alreadyRecorded(transaction))
    }

    @Test("withdrawing the refund of an unknown transaction throws notFound", arguments: StoreKind.allCases)
    func withdrawUnknown(_ kind: StoreKind) throws {
        let store = try TestStore(kind)
        let ledger = store.ledger
        let error = #expect(throws: LedgerError.self) { try ledger.withdrawCancellation(transactionID: "unknown") }
        #expect(error?.code == .notFound)
    }

    @Test(
        "renewal info is replaced only by one signed later; earlier and equal are kept out",
        arguments: StoreKind.allCases)
    func renewalReplacedOnlyByLater(_ kind: StoreKind) throws {
        let store = try TestStore(kind)
        let ledger = store.ledger
        let first = Self.renewal(signedAt: 100)
        #expect(try ledger.recordRenewalInfo(first) == .renewal(first, replaced: true))
        #expect(
            try ledger.recordRenewalInfo(Self.renewal(signedAt: 99, product: "a")) == .renewal(first, replaced: false))
        #expect(
            try ledger.recordRenewalInfo(Self.renewal(signedAt: 100, product: "b")) == .renewal(first, replaced: false))
        let later = LedgerRenewalInfo(
            originalTransactionID: first.originalTransactionID, bundleID: Sample.bundleID, productID: "c",
            signedDate: ReceiptDate(millisecondsSince1970: 101))
        #expect(try ledger.recordRenewalInfo(later) == .renewal(later, replaced: true))
        #expect(try ledger.renewalInfo(originalTransactionIDs: ["none", first.originalTransactionID]) == [later])
    }

    @Test("applying changes without a notification: a conflict stores none of them", arguments: StoreKind.allCases)
    func applyWithoutNotificationIsAtomic(_ kind: StoreKind) throws {
        let store = try TestStore(kind)
        let ledger = store.ledger
        _ = try ledger.record(Sample.full(id: "stored"))
        let error = #expect(throws: LedgerError.self) {
            try ledger.apply(
                [
                    .record(Sample.minimal(id: "new")), .renewal(Self.renewal(signedAt: 5)),
                    .record(Sample.full(id: "stored", customerID: "customer-b")),
                ], notification: nil)
        }
        #expect(error?.code == .conflict)
        #expect(try ledger.transaction(id: "new") == nil)
        #expect(try ledger.renewalInfo(originalTransactionIDs: ["2000000000000001"]).isEmpty)
        #expect(try ledger.count() == 1)
    }

    @Test(
        "applying a notification records a refusal in its effects and applies the rest", arguments: StoreKind.allCases)
    func applyWithNotificationKeepsGoing(_ kind: StoreKind) throws {
        let store = try TestStore(kind)
        let ledger = store.ledger
        let new = Sample.minimal(id: "new")
        let application = try ledger.apply(
            [.cancel(transactionID: "unknown", at: Self.refund), .record(new)], notification: Self.notification("n1"))
        guard case .applied(let outcomes) = application else {
            Issue.record("not applied: \(application)")
            return
        }
        #expect(outcomes.count == 2)
        #expect(outcomes.last == .recorded(.created(new)))
        #expect(try ledger.transaction(id: "new") == new)
        let stored = try ledger.notification(uuid: "n1")
        #expect(stored?.effects == outcomes.map(\.summary))
        #expect(stored?.effects.first?.hasPrefix("refused: notFound") == true)
    }

    @Test(
        "a notification UUID stored already changes nothing and returns the stored one", arguments: StoreKind.allCases)
    func duplicateNotificationChangesNothing(_ kind: StoreKind) throws {
        let store = try TestStore(kind)
        let ledger = store.ledger
        _ = try ledger.apply([.record(Sample.minimal(id: "first"))], notification: Self.notification("n1"))
        let stored = try ledger.notification(uuid: "n1")
        let again = try ledger.apply([.record(Sample.minimal(id: "second"))], notification: Self.notification("n1"))
        #expect(stored.map(LedgerApplication.duplicate) == again)
        #expect(try ledger.transaction(id: "second") == nil)
        #expect(try ledger.count() == 1)
    }

    @Test(
        "notifications page newest first, from since, through the cursor to a last page", arguments: StoreKind.allCases)
    func notificationPaging(_ kind: StoreKind) throws {
        let store = try TestStore(kind)
        let ledger = store.ledger
        for index in 0..<5 {
            _ = try ledger.apply([], notification: Self.notification("n\(index)", receivedAt: 1_000 + Int64(index)))
        }
        var other = Self.notification("other", receivedAt: 2_000)
        other.bundleID = "com.example.other"
        _ = try ledger.apply([], notification: other)
        let since = ReceiptDate(millisecondsSince1970: 1_001)
        let first = try ledger.notifications(bundleID: Sample.bundleID, since: since, before: nil, limit: 3)
        #expect(first.notifications.map(\.notificationUUID) == ["n4", "n3", "n2"])
        let second = try ledger.notifications(bundleID: Sample.bundleID, since: since, before: first.next, limit: 3)
        #expect(second.notifications.map(\.notificationUUID) == ["n1"])
        #expect(second.next == nil)
        #expect(first.next != nil)
    }

    @Test(
        "the customer of an original transaction is the first recorded one's; nil when none",
        arguments: StoreKind.allCases)
    func customerLookup(_ kind: StoreKind) throws {
        let store = try TestStore(kind)
        let ledger = store.ledger
        _ = try ledger.record(Sample.full(id: "1", customerID: "customer-a"))
        _ = try ledger.record(Sample.full(id: "2", customerID: "customer-b"))
        #expect(try ledger.customerID(originalTransactionID: "2000000000000001") == "customer-a")
        #expect(try ledger.customerID(originalTransactionID: "unknown") == nil)
    }

    @Test(
        "recording a placeholder's transaction for a customer moves all the placeholder's transactions",
        arguments: StoreKind.allCases)
    func placeholderAdoption(_ kind: StoreKind) throws {
        let store = try TestStore(kind)
        let ledger = store.ledger
        _ = try ledger.record(Self.placeholder(Sample.full(id: "1")))
        _ = try ledger.record(Self.placeholder(Sample.full(id: "2")))
        #expect(try ledger.record(Sample.full(id: "1", customerID: "customer-a")) == .created(Sample.full(id: "1")))
        #expect(try ledger.transaction(id: "2") == Sample.full(id: "2"))
        #expect(try ledger.transactions(customerID: "customer-a", bundleID: Sample.bundleID).count == 2)
    }

    @Test("a transaction of a customer who is no placeholder still conflicts", arguments: StoreKind.allCases)
    func nonPlaceholderConflicts(_ kind: StoreKind) throws {
        let store = try TestStore(kind)
        let ledger = store.ledger
        _ = try ledger.record(Sample.full(id: "1", customerID: "customer-a"))
        let error = #expect(throws: LedgerError.self) {
            try ledger.record(Sample.full(id: "1", customerID: "customer-b"))
        }
        #expect(error?.conflictingFields == ["customer_id"])
    }

    @Test("a placeholder's transaction with another field different still conflicts", arguments: StoreKind.allCases)
    func placeholderWithOtherFieldConflicts(_ kind: StoreKind) throws {
        let store = try TestStore(kind)
        let ledger = store.ledger
        _ = try ledger.record(Self.placeholder(Sample.full(id: "1")))
        var other = Sample.full(id: "1")
        other.purchase.quantity = 9
        let error = #expect(throws: LedgerError.self) { try ledger.record(other) }
        #expect(error?.conflictingFields == ["customer_id", "quantity"])
    }

    @Test("a SQLite ledger of schema 2, before renewal info and notifications, migrates and keeps its transactions")
    func sqliteMigration() throws {
        let store = try TestStore(.sqlite)
        _ = try store.ledger.record(Sample.fullWithoutToken)
        store.ledger.close()
        for statement in SchemaRewind.statements(.sqlite, to: 2) {
            try store.execute(statement)
        }
        let migrated = try SQLiteLedger(path: store.location)
        #expect(try migrated.storedSchemaVersion() == SQLiteLedger.schemaVersion)
        #expect(try migrated.transaction(id: Sample.full().purchase.transactionID) == Sample.fullWithoutToken)
        #expect(
            try migrated.recordRenewalInfo(Self.renewal(signedAt: 1))
                == .renewal(Self.renewal(signedAt: 1), replaced: true))
        #expect(try migrated.integrityCheck() == ["ok"])
    }

    @Test(
        "a PostgreSQL ledger of schema 1, before renewal info and notifications, migrates and keeps its transactions")
    func postgreSQLMigration() throws {
        let store = try TestStore(.postgreSQL)
        _ = try store.ledger.record(Sample.fullWithoutToken)
        store.ledger.close()
        for statement in SchemaRewind.statements(.postgreSQL, to: 1) {
            try store.execute(statement)
        }
        let migrated = try PostgreSQLLedger(uri: store.location, connections: 1)
        #expect(try migrated.storedSchemaVersion() == PostgreSQLLedger.schemaVersion)
        #expect(try migrated.transaction(id: Sample.full().purchase.transactionID) == Sample.fullWithoutToken)
        #expect(
            try migrated.recordRenewalInfo(Self.renewal(signedAt: 1))
                == .renewal(Self.renewal(signedAt: 1), replaced: true))
        #expect(try migrated.integrityCheck() == ["ok"])
    }
}
