import Entitlements
import Testing

/// The example catalog's season pass lasts P30D: bought 2024-06-01, it runs to 2024-07-01.
@Suite("non_renewing: active from purchase for its duration, then expired, with no grace")
struct NonRenewingTests {
    static func season(
        _ transaction: String = "1", at purchased: String = "2024-06-01T00:00:00Z", refunded: String? = nil
    )
        -> Purchase
    {
        Purchase(product: ProductID.season, transaction: transaction, purchased: purchased, cancelled: refunded)
    }

    @Test(
        "each boundary of the period, and one millisecond before it; the catalog's grace period does not apply",
        arguments: [
            ("2024-05-31T23:59:59.999Z", nil as EntitlementState?),
            ("2024-06-01T00:00:00Z", .active),
            ("2024-06-30T23:59:59.999Z", .active),
            ("2024-07-01T00:00:00Z", .expired),
            ("2024-07-05T00:00:00Z", .expired),
        ])
    func boundaries(now: String, expected: EntitlementState?) throws {
        let report = try Scenario.evaluate([Self.season()], at: now)
        #expect(report.state("season") == expected)
    }

    @Test("it reports purchase_date + duration as its expiry")
    func expiry() throws {
        let report = try Scenario.evaluate([Self.season()], at: "2024-06-10T00:00:00Z")
        let season = try #require(report.entitlements["season"])
        #expect(season.expiresDate == (try Scenario.date("2024-07-01T00:00:00Z")))
        #expect(season.graceExpiresDate == nil)
        #expect(season.transactionID == "1")
    }

    @Test(
        "a duration in months is calendar months: P1M bought on January 31 (2024) ends on February 29",
        arguments: [
            ("2024-02-29T09:59:59.999Z", EntitlementState.active),
            ("2024-02-29T10:00:00Z", .expired),
        ])
    func calendarDuration(now: String, expected: EntitlementState) throws {
        let catalog = try Scenario.catalog(
            #"{"products": [{"id": "pass", "type": "non_renewing", "entitlements": ["pass"], "duration": "P1M"}]}"#)
        let purchase = Purchase(product: "pass", transaction: "1", purchased: "2024-01-31T10:00:00Z")
        let report = try Scenario.evaluate([purchase], catalog: catalog, at: now)
        #expect(report.state("pass") == expected)
        #expect(report.entitlements["pass"]?.expiresDate == (try Scenario.date("2024-02-29T10:00:00Z")))
    }

    @Test("a refund revokes it")
    func refunded() throws {
        let report = try Scenario.evaluate(
            [Self.season(refunded: "2024-06-05T00:00:00Z")], at: "2024-06-10T00:00:00Z")
        #expect(report.state("season") == .revoked)
    }

    @Test("a refund dated after now has not happened yet")
    func refundAfterNow() throws {
        let report = try Scenario.evaluate(
            [Self.season(refunded: "2024-06-20T00:00:00Z")], at: "2024-06-10T00:00:00Z")
        #expect(report.state("season") == .active)
    }

    @Test("bought again while active: the later purchase, which lasts longer, is reported")
    func boughtAgain() throws {
        let purchases = [Self.season("1"), Self.season("2", at: "2024-06-20T00:00:00Z")]
        let report = try Scenario.evaluate(purchases, at: "2024-06-25T00:00:00Z")
        #expect(report.entitlements["season"]?.transactionID == "2")
        #expect(report.entitlements["season"]?.expiresDate == (try Scenario.date("2024-07-20T00:00:00Z")))
        let afterFirst = try Scenario.evaluate(purchases, at: "2024-07-10T00:00:00Z")
        #expect(afterFirst.state("season") == .active)
    }
}
