import Entitlements
import Testing

@Suite("Several receipts: one set of transactions, each transaction id counted once")
struct MergingReceiptsTests {
    static let coins = Purchase(
        product: ProductID.coins100, transaction: "500", purchased: "2024-06-01T00:00:00Z", quantity: 3)

    @Test("a transaction listed by several receipts counts once: the balance is not doubled")
    func duplicateCountsOnce() throws {
        let moreCoins = Purchase(
            product: ProductID.coins100, transaction: "501", purchased: "2024-06-03T00:00:00Z", quantity: 2)
        let receipts = [
            TestReceipt(created: "2024-06-01T00:00:00Z", purchases: [Self.coins]),
            TestReceipt(created: "2024-06-03T00:00:00Z", purchases: [Self.coins, moreCoins]),
            TestReceipt(created: "2024-06-03T00:00:00Z", purchases: [Self.coins, moreCoins]),
        ]
        let report = try Scenario.evaluate(receipts, at: "2024-06-10T00:00:00Z")
        #expect(report.balance("coins") == 500)
    }

    @Test("purchases spread over several receipts add up")
    func differentTransactionsAddUp() throws {
        let removeAds = Purchase(product: ProductID.removeAds, transaction: "600", purchased: "2024-05-01T00:00:00Z")
        let receipts = [
            TestReceipt(created: "2024-05-01T00:00:00Z", purchases: [removeAds]),
            TestReceipt(created: "2024-06-01T00:00:00Z", purchases: [Self.coins]),
        ]
        let report = try Scenario.evaluate(receipts, at: "2024-06-10T00:00:00Z")
        #expect(report.state("no_ads") == .active)
        #expect(report.balance("coins") == 300)
    }

    /// The same subscription transaction before and after its renewal date was extended.
    static func extended(_ expires: String) -> Purchase {
        Purchase(
            product: ProductID.proMonthly, transaction: "700", purchased: "2024-05-01T00:00:00Z", expires: expires,
            original: "700")
    }

    @Test("the copy from the newest receipt is used, whatever order the receipts come in", arguments: [false, true])
    func newestCopyWins(reversed: Bool) throws {
        let older = TestReceipt(created: "2024-05-01T00:00:00Z", purchases: [Self.extended("2024-06-01T00:00:00Z")])
        let newer = TestReceipt(created: "2024-05-20T00:00:00Z", purchases: [Self.extended("2024-07-01T00:00:00Z")])
        let receipts = reversed ? [newer, older] : [older, newer]
        let report = try Scenario.evaluate(receipts, at: "2024-06-10T00:00:00Z")
        let pro = try #require(report.entitlements["pro"])
        #expect(pro.state == .active)
        #expect(pro.expiresDate == (try Scenario.date("2024-07-01T00:00:00Z")))
    }

    @Test(
        "a refund seen in any copy stands, whether that copy is the older or the newer",
        arguments: [(true, false), (false, true), (true, true)])
    func refundInAnyCopy(olderRefunded: Bool, newerRefunded: Bool) throws {
        func copy(refunded: Bool) -> Purchase {
            Purchase(
                product: ProductID.removeAds, transaction: "800", purchased: "2024-05-01T00:00:00Z",
                cancelled: refunded ? "2024-05-05T00:00:00Z" : nil)
        }
        let receipts = [
            TestReceipt(created: "2024-05-10T00:00:00Z", purchases: [copy(refunded: newerRefunded)]),
            TestReceipt(created: "2024-05-01T00:00:00Z", purchases: [copy(refunded: olderRefunded)]),
        ]
        let report = try Scenario.evaluate(receipts, at: "2024-06-10T00:00:00Z")
        #expect(report.state("no_ads") == .revoked)
    }

    @Test("a refunded consumable listed by several receipts is refunded once, never counted")
    func refundedConsumableInSeveralReceipts() throws {
        var refunded = Self.coins
        refunded.cancelled = "2024-06-02T00:00:00Z"
        let receipts = [
            TestReceipt(created: "2024-06-01T00:00:00Z", purchases: [Self.coins]),
            TestReceipt(created: "2024-06-05T00:00:00Z", purchases: [refunded]),
        ]
        #expect(try Scenario.evaluate(receipts, at: "2024-06-10T00:00:00Z").balance("coins") == 0)
    }

    @Test("receipts for different bundle ids are refused")
    func mixedBundleIDs() throws {
        let receipts = [
            TestReceipt(purchases: [Self.coins]),
            TestReceipt(bundleID: "com.example.other", purchases: []),
        ]
        let error = try #require(throws: EntitlementError.self) {
            try Scenario.evaluate(receipts, at: "2024-06-10T00:00:00Z")
        }
        #expect(error.code == .mixedBundleIDs)
        #expect(error.message.contains("com.example.app"))
        #expect(error.message.contains("com.example.other"))
    }

    @Test("no receipts: nothing unlocked, every balance zero")
    func noReceipts() throws {
        let report = try Scenario.evaluate([TestReceipt](), at: "2024-06-10T00:00:00Z")
        #expect(report.entitlements.isEmpty)
        #expect(report.balances == ["coins": 0])
        #expect(report.unknownProducts.isEmpty)
    }
}
