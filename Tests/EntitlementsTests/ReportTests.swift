import Entitlements
import StrictJSON
import Testing

@Suite("The report: unknown products, accessors and JSON")
struct ReportTests {
    @Test("products missing from the catalog are ignored, and listed once each, sorted")
    func unknownProducts() throws {
        let purchases = [
            Purchase(product: "com.example.zeta", transaction: "1", purchased: "2024-06-01T00:00:00Z"),
            Purchase(product: ProductID.removeAds, transaction: "2", purchased: "2024-06-01T00:00:00Z"),
            Purchase(product: "com.example.alpha", transaction: "3", purchased: "2024-06-01T00:00:00Z"),
            Purchase(product: "com.example.zeta", transaction: "4", purchased: "2024-06-02T00:00:00Z"),
        ]
        let report = try Scenario.evaluate(purchases, at: "2024-06-10T00:00:00Z")
        #expect(report.unknownProducts == ["com.example.alpha", "com.example.zeta"])
        #expect(Set(report.entitlements.keys) == ["no_ads"])
        #expect(report.balances == ["coins": 0])
    }

    @Test(
        "isActive is true for active and grace, false for expired, revoked and what nothing grants",
        arguments: [
            ("2024-05-15T00:00:00Z", nil as String?, true),
            ("2024-06-05T00:00:00Z", nil, true),
            ("2024-07-05T00:00:00Z", nil, false),
            ("2024-05-15T00:00:00Z", "2024-05-10T00:00:00Z", false),
        ])
    func isActive(now: String, refunded: String?, active: Bool) throws {
        let purchase = Purchase(
            product: ProductID.proMonthly, transaction: "1", purchased: "2024-05-01T00:00:00Z",
            expires: "2024-06-01T00:00:00Z", cancelled: refunded)
        let report = try Scenario.evaluate([purchase], at: now)
        #expect(report.isActive("pro") == active)
        #expect(report.state("pro") != nil)
        #expect(!report.isActive("premium"))
        #expect(!report.isActive("no_such_entitlement"))
    }

    @Test("states order from best to worst: active, grace, expired, revoked")
    func stateOrder() {
        #expect(EntitlementState.allCases.sorted(by: >) == [.active, .grace, .expired, .revoked])
        #expect(EntitlementState.allCases.filter(\.unlocks) == [.active, .grace])
    }

    @Test("the JSON of a full report, exactly")
    func json() throws {
        let purchases = [
            Purchase(
                product: ProductID.removeAds, transaction: "1000", purchased: "2024-01-10T09:30:00Z", original: "1000"),
            Purchase(
                product: ProductID.premiumYearly, transaction: "2001", purchased: "2023-06-05T08:00:00Z",
                expires: "2024-06-05T08:00:00Z", original: "2000"),
            Purchase(product: ProductID.season, transaction: "3000", purchased: "2024-04-01T00:00:00.250Z"),
            Purchase(product: ProductID.coins100, transaction: "4000", purchased: "2024-06-01T00:00:00Z", quantity: 7),
            Purchase(
                product: ProductID.coins100, transaction: "4001", purchased: "2024-06-02T00:00:00Z",
                cancelled: "2024-06-03T00:00:00Z", quantity: 2),
            Purchase(product: "com.example.legacy", transaction: "5000", purchased: "2024-02-01T00:00:00Z"),
            Purchase(product: "com.example.beta", transaction: "5001", purchased: "2024-02-01T00:00:00Z"),
        ]
        let report = try Scenario.evaluate(purchases, at: "2024-06-15T12:00:00Z")
        let premium =
            #""state":"grace","product_id":"com.example.premium.yearly","transaction_id":"2001","#
            + #""original_transaction_id":"2000","purchase_date":"2023-06-05T08:00:00Z","#
            + #""expires_date":"2024-06-05T08:00:00Z","grace_expires_date":"2024-06-21T08:00:00Z""#
        let expected =
            #"{"now":"2024-06-15T12:00:00Z","entitlements":{"#
            + #""no_ads":{"state":"active","product_id":"com.example.removeads","transaction_id":"1000","#
            + #""original_transaction_id":"1000","purchase_date":"2024-01-10T09:30:00Z","expires_date":null},"#
            + #""premium":{"# + premium + "},"
            + #""pro":{"# + premium + "},"
            + #""season":{"state":"expired","product_id":"com.example.season","transaction_id":"3000","#
            + #""original_transaction_id":null,"purchase_date":"2024-04-01T00:00:00.250Z","#
            + #""expires_date":"2024-05-01T00:00:00.250Z"}},"#
            + #""balances":{"coins":700},"unknown_products":["com.example.beta","com.example.legacy"]}"#
        #expect(JSONValue.object(report.json).serialized() == expected)
    }
}
