import Foundation
import PostgreSQLTestSupport
import ReceiptModel
import Testing

@testable import ReceiptLedger

/// A directory of its own for one test, removed with everything in it when the test's suite instance goes away.
final class TemporaryDirectory {
    let url: URL

    init() throws {
        url = FileManager.default.temporaryDirectory.appendingPathComponent(
            "ReceiptLedgerTests-\(UUID().uuidString)", isDirectory: true)
        try FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
    }

    deinit {
        try? FileManager.default.removeItem(at: url)
    }

    /// The path of `name` inside the directory.
    func path(_ name: String = "ledger.sqlite") -> String {
        url.appendingPathComponent(name).path
    }
}

/// Transactions to record.
enum Sample {
    static let bundleID = "com.example.app"

    /// Every optional field set (an appAccountToken too), with a web order line item id above 2^53 (not representable as a Double) and dates
    /// with milliseconds, one before 1970.
    static func full(
        id: String = "2000000123456789", customerID: String = "customer-a", bundleID: String = Sample.bundleID,
        purchasedAt milliseconds: Int64 = 1_717_588_800_123
    ) -> LedgerTransaction {
        LedgerTransaction(
            customerID: customerID, bundleID: bundleID,
            purchase: InAppPurchase(
                productID: "com.example.app.premium.monthly", transactionID: id,
                purchaseDate: ReceiptDate(millisecondsSince1970: milliseconds), quantity: 3,
                originalTransactionID: "2000000000000001",
                originalPurchaseDate: ReceiptDate(millisecondsSince1970: -86_400_001), productType: 3,
                expiresDate: ReceiptDate(millisecondsSince1970: 1_720_180_800_999),
                webOrderLineItemID: 9_007_199_254_740_993, isTrialPeriod: true, isInIntroOfferPeriod: false,
                promotionalOfferID: "spring-offer-ü"),
            appAccountToken: "7e3fb20b-4cdb-47cc-936d-99d65f608138")
    }

    /// ``full(id:customerID:bundleID:purchasedAt:)`` without an appAccountToken, as ledgers before schema 4 (SQLite)
    /// or 3 (PostgreSQL) kept it.
    static var fullWithoutToken: LedgerTransaction {
        var transaction = full()
        transaction.appAccountToken = nil
        return transaction
    }

    /// Only the required fields set; every optional one nil.
    static func minimal(
        id: String = "2000000999999999", customerID: String = "customer-a", bundleID: String = Sample.bundleID,
        purchasedAt milliseconds: Int64 = 1_717_588_800_000
    ) -> LedgerTransaction {
        LedgerTransaction(
            customerID: customerID, bundleID: bundleID,
            purchase: InAppPurchase(
                productID: "com.example.app.coins", transactionID: id,
                purchaseDate: ReceiptDate(millisecondsSince1970: milliseconds), quantity: nil))
    }
}

/// The kinds of store every behaviour test runs against.
enum StoreKind: String, CaseIterable, Sendable, CustomTestStringConvertible {
    case sqlite = "SQLite"
    case postgreSQL = "PostgreSQL"

    var testDescription: String { rawValue }
}

/// Fresh, empty storage of one kind for one test: a SQLite file in a temporary directory, or a database of its own
/// on the tests' PostgreSQL server.
final class TestStore: Sendable {
    let kind: StoreKind
    /// The SQLite path or the PostgreSQL URI.
    let location: String
    /// The ledger opened on it first.
    let ledger: any TransactionLedger
    private let directory: TemporaryDirectory?

    init(_ kind: StoreKind) throws {
        self.kind = kind
        switch kind {
        case .sqlite:
            let directory = try TemporaryDirectory()
            self.directory = directory
            location = directory.path()
        case .postgreSQL:
            directory = nil
            location = try PostgreSQLTestServer.shared().createDatabase()
        }
        ledger = try LedgerLocation(location).open(connections: 4)
    }

    /// A ledger on this storage; each call opens another (with `connections` connections for PostgreSQL).
    func open(connections: Int = 4) throws(LedgerError) -> any TransactionLedger {
        try LedgerLocation(location).open(connections: connections)
    }

    /// Runs `sql` on the storage directly, bypassing the ledger.
    func execute(_ sql: String) throws {
        switch kind {
        case .sqlite:
            let database = try SQLiteDatabase(path: location)
            defer { database.close() }
            try database.execute(sql, purpose: "test")
        case .postgreSQL:
            let connection = try PostgreSQLConnection(uri: location, connectTimeoutSeconds: 5)
            defer { connection.close() }
            try connection.execute(sql, purpose: "test")
        }
    }

    /// The schema version of this kind of store before the last migration.
    var previousSchemaVersion: Int {
        (kind == .sqlite ? SQLiteLedger.schemaVersion : PostgreSQLLedger.schemaVersion) - 1
    }

    /// Closes the first ledger and takes the schema back to ``previousSchemaVersion``, its rows kept.
    func rewindToPreviousSchema() throws {
        ledger.close()
        for statement in SchemaRewind.statements(kind, to: previousSchemaVersion) {
            try execute(statement)
        }
    }

    /// The integrity check of `ledger`, which this store opened: `["ok"]` when sound.
    func integrityCheck(_ ledger: any TransactionLedger) throws -> [String] {
        switch ledger {
        case let sqlite as SQLiteLedger: try sqlite.integrityCheck()
        case let postgreSQL as PostgreSQLLedger: try postgreSQL.integrityCheck()
        default: ["not a ledger of a known kind"]
        }
    }
}

/// What takes a store's schema back to an older version, undoing its migrations newest first and keeping the rows
/// of the tables that stay: for the tests that migrate from there.
enum SchemaRewind {
    /// The statements that take `kind`'s current schema back to `version` (at least 1).
    static func statements(_ kind: StoreKind, to version: Int) -> [String] {
        switch kind {
        case .sqlite:
            sqlite[(version - 1)...].reversed().flatMap { $0 } + ["PRAGMA user_version = \(version)"]
        case .postgreSQL:
            postgreSQL[(version - 1)...].reversed().flatMap { $0 }
                + ["DELETE FROM ledger_migrations WHERE version > \(version)"]
        }
    }

    /// What undoes the migrations of the transactions' appAccountToken and of the outbox.
    private static let outbox = [
        "DROP TABLE outgoing_notifications", "ALTER TABLE transactions DROP COLUMN app_account_token",
    ]

    /// What undoes the migration of renewal info and notifications.
    private static let customerState = [
        "DROP TABLE renewal_info", "DROP TABLE notifications", "DROP INDEX transactions_by_original",
    ]

    /// What undoes each SQLite migration after the first, oldest first (element 0 undoes migration 2).
    private static let sqlite = [
        [
            "DROP TRIGGER transactions_counted_on_insert", "DROP TRIGGER transactions_counted_on_delete",
            "DROP TABLE ledger_counts",
        ],
        customerState, outbox,
    ]

    /// What undoes each PostgreSQL migration after the first, oldest first (element 0 undoes migration 2).
    private static let postgreSQL = [customerState, outbox]
}

/// `TemporaryDirectory` is only read after it is made.
extension TemporaryDirectory: @unchecked Sendable {}
