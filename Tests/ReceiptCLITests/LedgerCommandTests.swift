import Foundation
import PostgreSQLTestSupport
import ReceiptLedger
import ReceiptModel
import Testing

/// `receipt ledger copy` and `receipt ledger check`, run as the real binary against SQLite files and databases of
/// the tests' PostgreSQL server.
@Suite("receipt ledger")
struct LedgerCommandTests {
    let runner: CLIRunner

    init() throws {
        runner = try CLIRunner()
    }

    /// A transaction of customer `id % 3`, every optional field set, dates with milliseconds and one before 1970.
    static func transaction(_ id: Int) -> LedgerTransaction {
        LedgerTransaction(
            customerID: "customer-\(id % 3)", bundleID: "com.example.app",
            purchase: InAppPurchase(
                productID: "com.example.app.coins", transactionID: "\(2_000_000_000_000_000 + id)",
                purchaseDate: ReceiptDate(millisecondsSince1970: 1_717_588_800_123 + Int64(id)), quantity: 1,
                originalTransactionID: "\(2_000_000_000_000_000 + id)",
                originalPurchaseDate: ReceiptDate(millisecondsSince1970: -86_400_001), productType: 3,
                webOrderLineItemID: 9_007_199_254_740_993, isTrialPeriod: id % 2 == 0, promotionalOfferID: "offer-ü"))
    }

    /// A SQLite ledger in the runner's directory holding 1 200 transactions (more than a page), 30 of them refunded.
    func sourceLedger() throws -> String {
        let path = runner.path("source.sqlite")
        let ledger = try SQLiteLedger(path: path)
        defer { ledger.close() }
        for id in 0..<1_200 { _ = try ledger.record(Self.transaction(id)) }
        for id in stride(from: 0, to: 1_200, by: 40) {
            _ = try ledger.recordCancellation(
                transactionID: Self.transaction(id).purchase.transactionID,
                at: ReceiptDate(millisecondsSince1970: 1_718_000_000_000 + Int64(id)))
        }
        return path
    }

    @Test("copy from SQLite to PostgreSQL stores everything, ends equal, and a second run changes nothing")
    func copyToPostgreSQL() throws {
        let source = try sourceLedger()
        let target = try PostgreSQLTestServer.shared().createDatabase()
        let first = try runner.run(["ledger", "copy", source, target])
        #expect(first.status == 0, "\(first.standardError)")
        #expect(first.output.contains("copied 1200 transactions (1200 new, 0 already there) and 30 refunds (30 new"))
        let digests = first.output.split(separator: "\n").filter { $0.hasPrefix("FROM:") || $0.hasPrefix("TO:") }
        #expect(digests.count == 2)
        #expect(Set(digests.map { $0.split(separator: " ").suffix(4).joined(separator: " ") }).count == 1)

        let second = try runner.run(["ledger", "copy", source, target])
        #expect(second.status == 0, "\(second.standardError)")
        #expect(second.output.contains("(0 new, 1200 already there) and 30 refunds (0 new, 30 already there)"))

        let copied = try PostgreSQLLedger(uri: target, connections: 1)
        #expect(try copied.count() == 1_200)
        var refunded = Self.transaction(40)
        refunded.purchase.cancellationDate = ReceiptDate(millisecondsSince1970: 1_718_000_000_040)
        #expect(try copied.transaction(id: refunded.purchase.transactionID) == refunded)

        let check = try runner.run(["ledger", "check", target])
        #expect(check.status == 0, "\(check.standardError)")
        #expect(check.output.contains("schema version: \(PostgreSQLLedger.schemaVersion)\n"))
        #expect(check.output.contains("transactions: 1200 kept, 1200 counted\n"))
        #expect(check.output.contains("integrity: ok\n"))
    }

    @Test("copy back from PostgreSQL to a new SQLite file ends with the same digest")
    func copyBackToSQLite() throws {
        let source = try sourceLedger()
        let middle = try PostgreSQLTestServer.shared().createDatabase()
        #expect(try runner.run(["ledger", "copy", source, middle]).status == 0)
        let back = runner.path("back.sqlite")
        let result = try runner.run(["ledger", "copy", middle, back])
        #expect(result.status == 0, "\(result.standardError)")
        let sourceCheck = try runner.run(["ledger", "check", source])
        let backCheck = try runner.run(["ledger", "check", back])
        #expect(sourceCheck.status == 0 && backCheck.status == 0)
        let digest = { (output: String) in output.split(separator: "\n").first { $0.hasPrefix("digest:") } }
        #expect(digest(sourceCheck.output) != nil)
        #expect(digest(sourceCheck.output) == digest(backCheck.output))
    }

    @Test("a transaction TO holds with other fields stops the copy with exit 1, naming its id and the fields")
    func conflictStops() throws {
        let source = try sourceLedger()
        let target = runner.path("target.sqlite")
        var other = Self.transaction(5)
        other.customerID = "someone-else"
        other.purchase.quantity = 2
        let existing = try SQLiteLedger(path: target)
        _ = try existing.record(other)
        existing.close()
        let result = try runner.run(["ledger", "copy", source, target])
        #expect(result.status == 1)
        #expect(result.standardError.contains(other.purchase.transactionID), "\(result.standardError)")
        #expect(result.standardError.contains("customer_id, quantity"), "\(result.standardError)")
    }

    @Test("check finds a kept count that differs from the transactions stored, exit 1")
    func checkFindsCountMismatch() throws {
        let uri = try PostgreSQLTestServer.shared().createDatabase()
        let ledger = try PostgreSQLLedger(uri: uri, connections: 1)
        _ = try ledger.record(Self.transaction(1))
        ledger.close()
        try PostgreSQLTestServer.shared().execute(
            "UPDATE ledger_counts SET value = value + 5 WHERE shard = 0",
            database: String(try #require(URLComponents(string: uri)?.path.dropFirst())))
        let result = try runner.run(["ledger", "check", uri])
        #expect(result.status == 1)
        #expect(result.output.contains("transactions: 6 kept, 1 counted"), "\(result.output)")
        #expect(result.standardError.contains("the kept count 6"), "\(result.standardError)")
    }

    @Test("a SQLite FROM that does not exist is not created: exit 3; a bad command line is exit 2")
    func missingAndUsage() throws {
        let missing = runner.path("missing.sqlite")
        let result = try runner.run(["ledger", "check", missing])
        #expect(result.status == 3)
        #expect(!runner.exists("missing.sqlite"))
        #expect(try runner.run(["ledger", "copy", missing]).status == 2)
        #expect(try runner.run(["ledger", "move", "a", "b"]).status == 2)
        #expect(try runner.run(["ledger", "check", "a.sqlite", "--connections", "0"]).status == 2)
        let help = try runner.run(["ledger", "--help"])
        #expect(help.status == 0)
        #expect(help.output.contains("--connections"))
    }
}
