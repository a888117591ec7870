import Entitlements
import Testing

/// Three products of different types that all grant "pro".
@Suite("An entitlement granted by several products: the best state, then the one that lasts longer")
struct CombiningProductsTests {
    static func catalog() throws -> Catalog {
        try Scenario.catalog(
            """
            {"products": [
              {"id": "pro.lifetime", "type": "non_consumable", "entitlements": ["pro"]},
              {"id": "pro.monthly", "type": "auto_renewable", "entitlements": ["pro"], "group": "main", "rank": 1},
              {"id": "pro.pass", "type": "non_renewing", "entitlements": ["pro"], "duration": "P90D"}
            ],
             "grace_period": "P16D"}
            """)
    }

    static let lifetime = Purchase(product: "pro.lifetime", transaction: "L", purchased: "2024-01-01T00:00:00Z")

    static func monthly(_ purchased: String, _ expires: String, refunded: String? = nil) -> Purchase {
        Purchase(product: "pro.monthly", transaction: "M", purchased: purchased, expires: expires, cancelled: refunded)
    }

    static func pass(_ purchased: String, refunded: String? = nil) -> Purchase {
        Purchase(product: "pro.pass", transaction: "P", purchased: purchased, cancelled: refunded)
    }

    func pro(_ purchases: [Purchase], at now: String = "2024-06-10T00:00:00Z") throws -> Entitlement {
        try #require(try Scenario.evaluate(purchases, catalog: Self.catalog(), at: now).entitlements["pro"])
    }

    @Test("lifetime purchase and expired subscription: active from the lifetime purchase, with no expiry")
    func lifetimeAndExpiredSubscription() throws {
        let pro = try pro([Self.lifetime, Self.monthly("2024-03-01T00:00:00Z", "2024-04-01T00:00:00Z")])
        #expect(pro.state == .active)
        #expect(pro.productID == "pro.lifetime")
        #expect(pro.transactionID == "L")
        #expect(pro.expiresDate == nil)
    }

    @Test("lifetime purchase and active subscription: both active, the lifetime purchase lasts longer")
    func lifetimeAndActiveSubscription() throws {
        let pro = try pro([Self.monthly("2024-06-01T00:00:00Z", "2024-07-01T00:00:00Z"), Self.lifetime])
        #expect(pro.productID == "pro.lifetime")
        #expect(pro.expiresDate == nil)
    }

    @Test(
        "two active products: the one whose period ends later",
        arguments: [
            ("2024-05-15T00:00:00Z", "pro.pass", "2024-08-13T00:00:00Z"),
            ("2024-03-15T00:00:00Z", "pro.monthly", "2024-07-01T00:00:00Z"),
        ])
    func laterEndWins(passBought: String, product: String, expires: String) throws {
        let pro = try pro([Self.monthly("2024-06-01T00:00:00Z", "2024-07-01T00:00:00Z"), Self.pass(passBought)])
        #expect(pro.state == .active)
        #expect(pro.productID == product)
        #expect(pro.expiresDate == (try Scenario.date(expires)))
    }

    @Test("active beats grace, even when the grace period ends later")
    func activeBeatsGrace() throws {
        // The subscription is in grace until 2024-06-17; the pass is active until 2024-06-12.
        let pro = try pro([
            Self.monthly("2024-05-01T00:00:00Z", "2024-06-01T00:00:00Z"), Self.pass("2024-03-14T00:00:00Z"),
        ])
        #expect(pro.state == .active)
        #expect(pro.productID == "pro.pass")
    }

    @Test("grace beats expired")
    func graceBeatsExpired() throws {
        let pro = try pro([
            Self.monthly("2024-05-01T00:00:00Z", "2024-06-01T00:00:00Z"), Self.pass("2024-03-01T00:00:00Z"),
        ])
        #expect(pro.state == .grace)
        #expect(pro.productID == "pro.monthly")
    }

    @Test("expired beats revoked")
    func expiredBeatsRevoked() throws {
        let refundedLifetime = Purchase(
            product: "pro.lifetime", transaction: "L", purchased: "2024-01-01T00:00:00Z",
            cancelled: "2024-01-02T00:00:00Z")
        let pro = try pro([refundedLifetime, Self.pass("2024-01-15T00:00:00Z")])
        #expect(pro.state == .expired)
        #expect(pro.productID == "pro.pass")
    }

    @Test("a refunded lifetime purchase does not hide an active subscription")
    func revokedLifetimeAndActiveSubscription() throws {
        let refundedLifetime = Purchase(
            product: "pro.lifetime", transaction: "L", purchased: "2024-01-01T00:00:00Z",
            cancelled: "2024-01-02T00:00:00Z")
        let pro = try pro([refundedLifetime, Self.monthly("2024-06-01T00:00:00Z", "2024-07-01T00:00:00Z")])
        #expect(pro.state == .active)
        #expect(pro.productID == "pro.monthly")
    }
}
