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

    /// A transaction of customer `id % 3`, every optional field set, dates with milliseconds and one before 1970;
    /// those with an even `id` carry an appAccountToken.
    static func transaction(_ id: Int) -> LedgerTransaction {
        LedgerTransaction(
            customerID: "customer-\(id % 3)", bundleID: "com.example.app",
            purchase: InAppPurchase(
                productID: "com.example.app.coins", transactionID: "\(2_000_000_000_000_000 + id)",
                purchaseDate: ReceiptDate(millisecondsSince1970: 1_717_588_800_123 + Int64(id)), quantity: 1,
                originalTransactionID: "\(2_000_000_000_000_000 + id)",
                originalPurchaseDate: ReceiptDate(millisecondsSince1970: -86_400_001), productType: 3,
                webOrderLineItemID: 9_007_199_254_740_993, isTrialPeriod: id % 2 == 0, promotionalOfferID: "offer-ü"),
            appAccountToken: id % 2 == 0 ? "00000000-0000-4000-8000-\(String(100_000_000_000 + id))" : nil)
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

    /// Renewal info for 3 subscriptions (every optional field set on one) and 5 notifications, two of which
    /// changed nothing, stored in `ledger` as the notification endpoint stores them.
    static func storeCustomerState(in ledger: any TransactionLedger) throws {
        for index in 0..<5 {
            let original = Self.transaction(index % 3).purchase.transactionID
            var info = LedgerRenewalInfo(
                originalTransactionID: original, bundleID: "com.example.app", productID: "com.example.app.monthly",
                signedDate: ReceiptDate(millisecondsSince1970: 1_718_000_000_000 + Int64(index)))
            if index == 4 {
                info.autoRenewProductID = "com.example.app.yearly"
                info.autoRenews = false
                info.expirationIntent = 1
                info.isInBillingRetryPeriod = true
                info.gracePeriodExpiresDate = ReceiptDate(millisecondsSince1970: 1_718_600_000_000)
                info.priceIncreaseStatus = 0
            }
            let notification = LedgerNotification(
                notificationUUID: "00000000-0000-4000-8000-00000000000\(index)",
                notificationType: index < 3 ? "DID_CHANGE_RENEWAL_STATUS" : "TEST",
                subtype: index < 3 ? "AUTO_RENEW_DISABLED" : nil, bundleID: "com.example.app",
                signedDate: info.signedDate, receivedDate: ReceiptDate(millisecondsSince1970: 1_718_000_100_000),
                customerID: index < 3 ? "customer-\(index)" : nil, transactionID: index < 3 ? original : nil,
                originalTransactionID: index < 3 ? original : nil, signedPayload: "eyJ.payload-\(index).sig")
            _ = try ledger.apply(index < 3 || index == 4 ? [.renewal(info)] : [], notification: notification)
        }
    }

    @Test("copy carries renewal info and notifications, with what each notification did, and ends equal")
    func copyCarriesCustomerState() throws {
        let source = try sourceLedger()
        let ledger = try SQLiteLedger(path: source)
        try Self.storeCustomerState(in: ledger)
        ledger.close()
        let target = try PostgreSQLTestServer.shared().createDatabase()
        let first = try runner.run(["ledger", "copy", source, target])
        #expect(first.status == 0, "\(first.standardError)")
        #expect(first.output.contains("copied 3 renewal infos and 5 notifications (5 new, 0 already there)"))
        let second = try runner.run(["ledger", "copy", source, target])
        #expect(second.status == 0, "\(second.standardError)")
        #expect(second.output.contains("copied 3 renewal infos and 5 notifications (0 new, 5 already there)"))

        let original = try SQLiteLedger(path: source)
        defer { original.close() }
        let copied = try PostgreSQLLedger(uri: target, connections: 1)
        defer { copied.close() }
        let originals = (0..<3).map { Self.transaction($0).purchase.transactionID }
        #expect(try copied.renewalInfo(originalTransactionIDs: originals).count == 3)
        #expect(
            try copied.renewalInfo(originalTransactionIDs: originals)
                == original.renewalInfo(originalTransactionIDs: originals))
        for index in 0..<5 {
            let uuid = "00000000-0000-4000-8000-00000000000\(index)"
            let stored = try #require(try original.notification(uuid: uuid))
            #expect(try copied.notification(uuid: uuid) == stored)
        }
        #expect(try copied.notification(uuid: "00000000-0000-4000-8000-000000000001")?.effects.isEmpty == false)
        let listed = try copied.notifications(bundleID: "com.example.app", since: nil, before: nil, limit: 10)
        #expect(listed.notifications.map(\.notificationUUID).first == "00000000-0000-4000-8000-000000000004")

        let check = try runner.run(["ledger", "check", target])
        #expect(check.status == 0, "\(check.standardError)")
        let digest = { (output: String) in output.split(separator: "\n").first { $0.hasPrefix("digest:") } }
        let sourceCheck = try runner.run(["ledger", "check", source])
        #expect(digest(sourceCheck.output) != nil)
        #expect(digest(sourceCheck.output) == digest(check.output))
    }

    @Test("copy carries the outbox, attempts and next attempts included, ends equal, and a second run adds nothing")
    func copyCarriesOutbox() throws {
        let source = runner.path("outbox.sqlite")
        let ledger = try SQLiteLedger(path: source)
        let queued = (0..<3).map { index in
            LedgerOutgoingNotification(
                notificationUUID: "00000000-0000-4000-8000-00000000010\(index)", url: "http://localhost:8080/apple",
                bundleID: "com.example.app", notificationType: index == 0 ? "TEST" : "ONE_TIME_CHARGE",
                transactionID: index == 0 ? nil : Self.transaction(index).purchase.transactionID,
                testToken: index == 0 ? "token-0" : nil,
                signedDate: ReceiptDate(millisecondsSince1970: 1_718_000_000_000 + Int64(index)),
                signedPayload: "eyJ.outgoing-\(index).sig")
        }
        _ = try ledger.apply([.queue(queued)])
        _ = try ledger.recordDeliveryAttempt(
            notificationUUID: queued[1].notificationUUID, url: queued[1].url,
            attempt: LedgerDeliveryAttempt(
                date: ReceiptDate(millisecondsSince1970: 1_718_000_000_500), result: .unsuccessfulHTTPResponseCode,
                httpStatus: 500), nextAttemptDate: ReceiptDate(millisecondsSince1970: 1_718_000_060_000))
        let stored = try ledger.outgoingNotifications(afterSequence: nil, limit: 10).map(\.notification)
        ledger.close()
        let target = try PostgreSQLTestServer.shared().createDatabase()
        let first = try runner.run(["ledger", "copy", source, target])
        #expect(first.status == 0, "\(first.standardError)")
        #expect(first.output.contains("copied 3 outgoing notifications (3 new, 0 already there)"), "\(first.output)")
        let second = try runner.run(["ledger", "copy", source, target])
        #expect(second.status == 0, "\(second.standardError)")
        #expect(second.output.contains("copied 3 outgoing notifications (0 new, 3 already there)"))

        let copied = try PostgreSQLLedger(uri: target, connections: 1)
        defer { copied.close() }
        #expect(try copied.outgoingNotifications(afterSequence: nil, limit: 10).map(\.notification) == stored)
        let check = try runner.run(["ledger", "check", target])
        #expect(check.status == 0, "\(check.standardError)")
        #expect(check.output.contains("outgoing notifications: 3\n"))
        let digest = { (output: String) in output.split(separator: "\n").first { $0.hasPrefix("digest:") } }
        let sourceCheck = try runner.run(["ledger", "check", source])
        #expect(digest(sourceCheck.output) != nil)
        #expect(digest(sourceCheck.output) == digest(check.output))
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
