import Entitlements
import Testing

/// The example catalog's coins100 adds 100 coins per unit.
@Suite("consumable: a balance, the sum of quantity × amount over counted, non-refunded purchases")
struct ConsumableTests {
    static func coins(_ transaction: String, quantity: Int64 = 1, at purchased: String, refunded: String? = nil)
        -> Purchase
    {
        Purchase(
            product: ProductID.coins100, transaction: transaction, purchased: purchased, cancelled: refunded,
            quantity: quantity)
    }

    @Test("quantity times amount, summed over purchases")
    func sum() throws {
        let purchases = [
            Self.coins("1", quantity: 3, at: "2024-06-01T00:00:00Z"),
            Self.coins("2", quantity: 4, at: "2024-06-02T00:00:00Z"),
        ]
        let report = try Scenario.evaluate(purchases, at: "2024-06-10T00:00:00Z")
        #expect(report.balance("coins") == 700)
        #expect(report.balances == ["coins": 700])
    }

    @Test("a refunded purchase does not count")
    func refunded() throws {
        let purchases = [
            Self.coins("1", quantity: 3, at: "2024-06-01T00:00:00Z"),
            Self.coins("2", quantity: 4, at: "2024-06-02T00:00:00Z", refunded: "2024-06-03T00:00:00Z"),
        ]
        #expect(try Scenario.evaluate(purchases, at: "2024-06-10T00:00:00Z").balance("coins") == 300)
    }

    @Test(
        "a refund counts from its own date: still counted one millisecond before it",
        arguments: [("2024-06-02T23:59:59.999Z", 700 as Int64), ("2024-06-03T00:00:00Z", 300)])
    func refundBoundary(now: String, balance: Int64) throws {
        let purchases = [
            Self.coins("1", quantity: 3, at: "2024-06-01T00:00:00Z"),
            Self.coins("2", quantity: 4, at: "2024-06-02T00:00:00Z", refunded: "2024-06-03T00:00:00Z"),
        ]
        #expect(try Scenario.evaluate(purchases, at: now).balance("coins") == balance)
    }

    @Test(
        "a purchase counts from its purchase_date on, not one millisecond before",
        arguments: [("2024-06-01T23:59:59.999Z", 300 as Int64), ("2024-06-02T00:00:00Z", 700)])
    func purchaseBoundary(now: String, balance: Int64) throws {
        let purchases = [
            Self.coins("1", quantity: 3, at: "2024-06-01T00:00:00Z"),
            Self.coins("2", quantity: 4, at: "2024-06-02T00:00:00Z"),
        ]
        #expect(try Scenario.evaluate(purchases, at: now).balance("coins") == balance)
    }

    @Test("every consumable balance of the catalog is listed, zero when nothing counts")
    func zeroBalances() throws {
        let catalog = try Scenario.catalog(
            """
            {"products": [
              {"id": "coins100", "type": "consumable", "entitlements": ["coins"], "amount": 100},
              {"id": "gems", "type": "consumable", "entitlements": ["gems", "xp"], "amount": 5},
              {"id": "removeads", "type": "non_consumable", "entitlements": ["no_ads"]}
            ]}
            """)
        let purchases = [Purchase(product: "removeads", transaction: "1", purchased: "2024-06-01T00:00:00Z")]
        let report = try Scenario.evaluate(purchases, catalog: catalog, at: "2024-06-10T00:00:00Z")
        #expect(report.balances == ["coins": 0, "gems": 0, "xp": 0])
        #expect(
            try Scenario.evaluate([TestReceipt](), catalog: catalog, at: "2024-06-10T00:00:00Z").balances.count == 3)
    }

    @Test("products sharing a balance add to it, and one product can add to several balances")
    func sharedBalances() throws {
        let catalog = try Scenario.catalog(
            """
            {"products": [
              {"id": "coins100", "type": "consumable", "entitlements": ["coins"], "amount": 100},
              {"id": "bundle", "type": "consumable", "entitlements": ["coins", "gems"], "amount": 25}
            ]}
            """)
        let purchases = [
            Purchase(product: "coins100", transaction: "1", purchased: "2024-06-01T00:00:00Z", quantity: 2),
            Purchase(product: "bundle", transaction: "2", purchased: "2024-06-01T00:00:00Z", quantity: 3),
        ]
        let report = try Scenario.evaluate(purchases, catalog: catalog, at: "2024-06-10T00:00:00Z")
        #expect(report.balances == ["coins": 275, "gems": 75])
    }

    @Test("a balance does not appear among the entitlement states")
    func notAState() throws {
        let report = try Scenario.evaluate(
            [Self.coins("1", at: "2024-06-01T00:00:00Z")], at: "2024-06-10T00:00:00Z")
        #expect(report.entitlements.isEmpty)
        #expect(!report.isActive("coins"))
    }

    @Test("a balance too large for 64 bits is an error, never a wrapped number")
    func overflow() throws {
        let purchases = [Self.coins("1", quantity: Int64.max / 100 + 1, at: "2024-06-01T00:00:00Z")]
        let error = try #require(throws: EntitlementError.self) {
            try Scenario.evaluate(purchases, at: "2024-06-10T00:00:00Z")
        }
        #expect(error.code == .balanceOverflow)
    }

    @Test("a sum too large for 64 bits is an error too")
    func sumOverflow() throws {
        let purchases = [
            Self.coins("1", quantity: Int64.max / 100, at: "2024-06-01T00:00:00Z"),
            Self.coins("2", quantity: 1, at: "2024-06-01T00:00:00Z"),
        ]
        let error = try #require(throws: EntitlementError.self) {
            try Scenario.evaluate(purchases, at: "2024-06-10T00:00:00Z")
        }
        #expect(error.code == .balanceOverflow)
    }
}
