import Entitlements
import ReceiptModel
import Testing

/// Apple's renewal info decides a subscription's grace instead of the catalog: the monthly period 2024-05-01 to
/// 2024-06-01, the example catalog's own grace period (P16D) to 2024-06-17, Apple's billing grace to 2024-06-07.
@Suite("renewal info: billing retry within Apple's grace period is grace, past it or without it expired")
struct RenewalInfoGraceTests {
    static func evaluate(_ renewal: SubscriptionRenewal, at now: String) throws -> EntitlementReport {
        let purchase = try Scenario.receipt(TestReceipt(purchases: [AutoRenewableTests.monthly(original: "100")]))
        return try EntitlementEngine(catalog: Scenario.exampleCatalog()).evaluate(
            purchases: purchase.inAppPurchases, bundleID: Scenario.bundleID, renewals: ["100": renewal],
            at: Scenario.date(now))
    }

    static let retrying = SubscriptionRenewal(
        isInBillingRetryPeriod: true, gracePeriodExpiresDate: ReceiptDate(rfc3339: "2024-06-07T00:00:00Z"))

    @Test("in billing retry before Apple's grace period ends it is grace, ending when Apple's does")
    func billingRetryWithinGrace() throws {
        let pro = try #require(try Self.evaluate(Self.retrying, at: "2024-06-06T23:59:59.999Z").entitlements["pro"])
        #expect(pro.state == .grace)
        #expect(pro.graceExpiresDate == (try Scenario.date("2024-06-07T00:00:00Z")))
    }

    @Test("in billing retry once Apple's grace period has ended it is expired, whatever the catalog's says")
    func billingRetryPastGrace() throws {
        #expect(try Self.evaluate(Self.retrying, at: "2024-06-07T00:00:00Z").state("pro") == .expired)
    }

    @Test("in billing retry without a grace period it is expired")
    func billingRetryWithoutGrace() throws {
        let renewal = SubscriptionRenewal(isInBillingRetryPeriod: true, gracePeriodExpiresDate: nil)
        #expect(try Self.evaluate(renewal, at: "2024-06-02T00:00:00Z").state("pro") == .expired)
    }

    @Test("not in billing retry (auto-renew off) it is expired once its period ends")
    func notRetrying() throws {
        let renewal = SubscriptionRenewal(isInBillingRetryPeriod: false, gracePeriodExpiresDate: nil)
        #expect(try Self.evaluate(renewal, at: "2024-06-02T00:00:00Z").state("pro") == .expired)
    }

    @Test("renewal info changes nothing while the period is paid")
    func activePeriod() throws {
        #expect(try Self.evaluate(Self.retrying, at: "2024-05-15T00:00:00Z").state("pro") == .active)
    }
}
