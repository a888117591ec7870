import Entitlements
import Testing

/// In the example catalog, group "main" has premium.yearly (rank 1: pro, premium) above pro.monthly (rank 2: pro).
@Suite("Subscription groups: only the best-ranked product that is active or in grace grants")
struct SubscriptionGroupTests {
    static func monthly(_ transaction: String, _ purchased: String, _ expires: String, refunded: String? = nil)
        -> Purchase
    {
        Purchase(
            product: ProductID.proMonthly, transaction: transaction, purchased: purchased, expires: expires,
            cancelled: refunded, original: transaction)
    }

    static func yearly(_ transaction: String, _ purchased: String, _ expires: String, refunded: String? = nil)
        -> Purchase
    {
        Purchase(
            product: ProductID.premiumYearly, transaction: transaction, purchased: purchased, expires: expires,
            cancelled: refunded, original: transaction)
    }

    /// Two groups: "main" (gold over silver) and "news" (plus over basic).
    static let twoGroupCatalog = """
        {"products": [
          {"id": "gold", "type": "auto_renewable", "entitlements": ["pro", "gold"], "group": "main", "rank": 1},
          {"id": "silver", "type": "auto_renewable", "entitlements": ["pro", "silver"], "group": "main", "rank": 2},
          {"id": "news.plus", "type": "auto_renewable", "entitlements": ["news", "archive"],
           "group": "news", "rank": 1},
          {"id": "news.basic", "type": "auto_renewable", "entitlements": ["news"], "group": "news", "rank": 2}
        ]}
        """

    static func product(_ id: String, _ transaction: String, _ purchased: String, _ expires: String) -> Purchase {
        Purchase(product: id, transaction: transaction, purchased: purchased, expires: expires)
    }

    @Test("upgrade: with both levels active, the better-ranked one grants")
    func upgrade() throws {
        let purchases = [
            Self.monthly("1", "2024-06-01T00:00:00Z", "2024-07-01T00:00:00Z"),
            Self.yearly("2", "2024-06-10T00:00:00Z", "2025-06-10T00:00:00Z"),
        ]
        let report = try Scenario.evaluate(purchases, at: "2024-06-15T00:00:00Z")
        #expect(report.entitlements["pro"]?.productID == ProductID.premiumYearly)
        #expect(report.entitlements["pro"]?.transactionID == "2")
        #expect(report.state("premium") == .active)
    }

    @Test("the lower rank is superseded even when it is active and would last longer")
    func supersededThoughLonger() throws {
        let purchases = [
            Self.yearly("1", "2023-06-15T00:00:00Z", "2024-06-15T00:00:00Z"),
            Self.monthly("2", "2024-06-01T00:00:00Z", "2024-07-01T00:00:00Z"),
        ]
        let report = try Scenario.evaluate(purchases, at: "2024-06-10T00:00:00Z")
        let pro = try #require(report.entitlements["pro"])
        #expect(pro.state == .active)
        #expect(pro.productID == ProductID.premiumYearly)
        #expect(pro.expiresDate == (try Scenario.date("2024-06-15T00:00:00Z")))
    }

    @Test("downgrade: once the better rank has expired, the active lower rank grants and the other shows expired")
    func downgrade() throws {
        let purchases = [
            Self.yearly("1", "2023-05-01T00:00:00Z", "2024-05-01T00:00:00Z"),
            Self.monthly("2", "2024-05-01T00:00:00Z", "2024-06-01T00:00:00Z"),
        ]
        let report = try Scenario.evaluate(purchases, at: "2024-05-20T00:00:00Z")
        #expect(report.state("pro") == .active)
        #expect(report.entitlements["pro"]?.productID == ProductID.proMonthly)
        #expect(report.state("premium") == .expired)
    }

    @Test("rank 1 in grace beats rank 2 active: the entitlement is in grace, from rank 1")
    func graceOfBetterRankWins() throws {
        let purchases = [
            Self.yearly("1", "2023-05-01T00:00:00Z", "2024-05-01T00:00:00Z"),
            Self.monthly("2", "2024-05-01T00:00:00Z", "2024-06-01T00:00:00Z"),
        ]
        let report = try Scenario.evaluate(purchases, at: "2024-05-05T00:00:00Z")
        let pro = try #require(report.entitlements["pro"])
        #expect(pro.state == .grace)
        #expect(pro.productID == ProductID.premiumYearly)
        #expect(report.isActive("pro"))
        #expect(report.state("premium") == .grace)
    }

    @Test("a refunded better rank does not supersede: the lower rank grants, the refunded one shows revoked")
    func refundedBetterRank() throws {
        let purchases = [
            Self.yearly("1", "2024-06-01T00:00:00Z", "2025-06-01T00:00:00Z", refunded: "2024-06-02T00:00:00Z"),
            Self.monthly("2", "2024-06-03T00:00:00Z", "2024-07-03T00:00:00Z"),
        ]
        let report = try Scenario.evaluate(purchases, at: "2024-06-10T00:00:00Z")
        #expect(report.state("pro") == .active)
        #expect(report.entitlements["pro"]?.productID == ProductID.proMonthly)
        #expect(report.state("premium") == .revoked)
    }

    @Test("a better rank bought after now does not supersede yet")
    func betterRankAfterNow() throws {
        let purchases = [
            Self.monthly("1", "2024-06-01T00:00:00Z", "2024-07-01T00:00:00Z"),
            Self.yearly("2", "2024-06-20T00:00:00Z", "2025-06-20T00:00:00Z"),
        ]
        let report = try Scenario.evaluate(purchases, at: "2024-06-10T00:00:00Z")
        #expect(report.entitlements["pro"]?.productID == ProductID.proMonthly)
        #expect(report.state("premium") == nil)
    }

    @Test("a superseded product grants nothing, not even the entitlements only it lists")
    func supersededGrantsNothing() throws {
        let catalog = try Scenario.catalog(Self.twoGroupCatalog)
        let purchases = [
            Self.product("gold", "1", "2024-06-01T00:00:00Z", "2024-07-01T00:00:00Z"),
            Self.product("silver", "2", "2024-06-01T00:00:00Z", "2024-07-01T00:00:00Z"),
        ]
        let report = try Scenario.evaluate(purchases, catalog: catalog, at: "2024-06-10T00:00:00Z")
        #expect(report.entitlements["pro"]?.productID == "gold")
        #expect(report.state("gold") == .active)
        #expect(report.state("silver") == nil)
        #expect(!report.isActive("silver"))
    }

    @Test("two groups are independent: rank 1 in one group does not supersede rank 2 in another")
    func twoGroups() throws {
        let catalog = try Scenario.catalog(Self.twoGroupCatalog)
        let purchases = [
            Self.product("gold", "1", "2024-06-01T00:00:00Z", "2024-07-01T00:00:00Z"),
            Self.product("news.basic", "2", "2024-06-02T00:00:00Z", "2024-07-02T00:00:00Z"),
        ]
        let report = try Scenario.evaluate(purchases, catalog: catalog, at: "2024-06-10T00:00:00Z")
        #expect(report.entitlements["pro"]?.productID == "gold")
        #expect(report.entitlements["news"]?.productID == "news.basic")
        #expect(report.state("news") == .active)
        #expect(report.state("archive") == nil)
    }

    @Test("each group picks its own best rank")
    func bestRankPerGroup() throws {
        let catalog = try Scenario.catalog(Self.twoGroupCatalog)
        let purchases = [
            Self.product("silver", "1", "2024-06-01T00:00:00Z", "2024-07-01T00:00:00Z"),
            Self.product("news.basic", "2", "2024-06-01T00:00:00Z", "2024-08-01T00:00:00Z"),
            Self.product("news.plus", "3", "2024-06-05T00:00:00Z", "2024-07-05T00:00:00Z"),
        ]
        let report = try Scenario.evaluate(purchases, catalog: catalog, at: "2024-06-10T00:00:00Z")
        #expect(report.entitlements["pro"]?.productID == "silver")
        #expect(report.state("silver") == .active)
        #expect(report.entitlements["news"]?.productID == "news.plus")
        #expect(report.state("archive") == .active)
    }
}
