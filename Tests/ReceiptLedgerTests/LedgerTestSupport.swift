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

    /// Every optional field set, with a web order line item id above 2^53 (not representable as a Double) and dates
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
                promotionalOfferID: "spring-offer-ü"))
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

    /// The integrity check of `ledger`, which this store opened: `["ok"]` when sound.
    func integrityCheck(_ ledger: any TransactionLedger) throws -> [String] {
        switch ledger {
        case let sqlite as SQLiteLedger: try sqlite.integrityCheck()
        case let postgreSQL as PostgreSQLLedger: try postgreSQL.integrityCheck()
        default: ["not a ledger of a known kind"]
        }
    }
}

/// `TemporaryDirectory` is only read after it is made.
extension TemporaryDirectory: @unchecked Sendable {}
