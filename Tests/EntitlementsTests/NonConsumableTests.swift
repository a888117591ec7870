import Entitlements
import Testing

@Suite("non_consumable: active once bought, revoked when every purchase was refunded")
struct NonConsumableTests {
    static let bought = "2024-03-10T08:00:00Z"

    static func removeAds(_ transaction: String = "1", at purchased: String = bought, refunded: String? = nil)
        -> Purchase
    {
        Purchase(product: ProductID.removeAds, transaction: transaction, purchased: purchased, cancelled: refunded)
    }

    @Test("it counts from the instant of purchase: active at purchase_date, absent one millisecond before")
    func purchaseBoundary() throws {
        let atPurchase = try Scenario.evaluate([Self.removeAds()], at: Self.bought)
        #expect(atPurchase.state("no_ads") == .active)
        let justBefore = try Scenario.evaluate([Self.removeAds()], at: "2024-03-10T07:59:59.999Z")
        #expect(justBefore.state("no_ads") == nil)
        #expect(!justBefore.isActive("no_ads"))
    }

    @Test("it never expires: years later it is still active, with no expiry date")
    func lifetime() throws {
        let report = try Scenario.evaluate([Self.removeAds()], at: "2031-01-01T00:00:00Z")
        let entitlement = try #require(report.entitlements["no_ads"])
        #expect(entitlement.state == .active)
        #expect(entitlement.productID == ProductID.removeAds)
        #expect(entitlement.transactionID == "1")
        #expect(entitlement.expiresDate == nil)
        #expect(entitlement.graceExpiresDate == nil)
    }

    @Test("a refund revokes it")
    func refunded() throws {
        let report = try Scenario.evaluate(
            [Self.removeAds(refunded: "2024-03-12T00:00:00Z")], at: "2024-04-01T00:00:00Z")
        #expect(report.state("no_ads") == .revoked)
        #expect(!report.isActive("no_ads"))
    }

    @Test(
        "a refund counts from its own date on: active one millisecond before it, revoked at it",
        arguments: [
            ("2024-03-11T23:59:59.999Z", EntitlementState.active),
            ("2024-03-12T00:00:00Z", .revoked),
        ])
    func refundBoundary(now: String, expected: EntitlementState) throws {
        let report = try Scenario.evaluate([Self.removeAds(refunded: "2024-03-12T00:00:00Z")], at: now)
        #expect(report.state("no_ads") == expected)
    }

    @Test("a refund dated after now has not happened yet at now")
    func refundInTheFuture() throws {
        let report = try Scenario.evaluate(
            [Self.removeAds(refunded: "2024-05-01T00:00:00Z")], at: "2024-04-01T00:00:00Z")
        #expect(report.state("no_ads") == .active)
    }

    @Test("one refunded purchase and one kept: active, from the purchase that was kept")
    func oneOfTwoRefunded() throws {
        let report = try Scenario.evaluate(
            [
                Self.removeAds("1", refunded: "2024-03-12T00:00:00Z"),
                Self.removeAds("2", at: "2024-03-20T00:00:00Z"),
            ], at: "2024-04-01T00:00:00Z")
        #expect(report.state("no_ads") == .active)
        #expect(report.entitlements["no_ads"]?.transactionID == "2")
    }

    @Test("a purchase dated after now does not count yet, even beside a refunded one")
    func purchaseAfterNow() throws {
        let report = try Scenario.evaluate(
            [
                Self.removeAds("1", refunded: "2024-03-12T00:00:00Z"),
                Self.removeAds("2", at: "2024-05-01T00:00:00Z"),
            ], at: "2024-04-01T00:00:00Z")
        #expect(report.state("no_ads") == .revoked)
        #expect(report.entitlements["no_ads"]?.transactionID == "1")
    }
}
