import Entitlements
import Testing

/// One monthly period, 2024-05-01 to 2024-06-01; the example catalog's grace period (P16D) runs to 2024-06-17.
@Suite("auto_renewable: active in its period, then grace, then expired; revoked when refunded")
struct AutoRenewableTests {
    static func monthly(
        _ transaction: String = "1", from purchased: String = "2024-05-01T00:00:00Z",
        to expires: String = "2024-06-01T00:00:00Z", refunded: String? = nil, original: String? = nil
    ) -> Purchase {
        Purchase(
            product: ProductID.proMonthly, transaction: transaction, purchased: purchased, expires: expires,
            cancelled: refunded, original: original)
    }

    static let noGraceCatalog = """
        {"products": [
          {"id": "com.example.pro.monthly", "type": "auto_renewable", "entitlements": ["pro"],
           "group": "main", "rank": 1}
        ]}
        """

    @Test(
        "each boundary of the period and of the grace period, and one millisecond before it",
        arguments: [
            ("2024-04-30T23:59:59.999Z", nil as EntitlementState?),
            ("2024-05-01T00:00:00Z", .active),
            ("2024-05-31T23:59:59.999Z", .active),
            ("2024-06-01T00:00:00Z", .grace),
            ("2024-06-16T23:59:59.999Z", .grace),
            ("2024-06-17T00:00:00Z", .expired),
        ])
    func boundaries(now: String, expected: EntitlementState?) throws {
        let report = try Scenario.evaluate([Self.monthly()], at: now)
        #expect(report.state("pro") == expected)
        #expect(report.isActive("pro") == (expected == .active || expected == .grace))
    }

    @Test("while active it reports the transaction and its expiry, and no grace end")
    func activeDetails() throws {
        let report = try Scenario.evaluate([Self.monthly(original: "100")], at: "2024-05-15T00:00:00Z")
        let pro = try #require(report.entitlements["pro"])
        #expect(pro.state == .active)
        #expect(pro.productID == ProductID.proMonthly)
        #expect(pro.transactionID == "1")
        #expect(pro.originalTransactionID == "100")
        #expect(pro.purchaseDate == (try Scenario.date("2024-05-01T00:00:00Z")))
        #expect(pro.expiresDate == (try Scenario.date("2024-06-01T00:00:00Z")))
        #expect(pro.graceExpiresDate == nil)
    }

    @Test("in grace it stays unlocked and says when the grace period ends")
    func graceDetails() throws {
        let report = try Scenario.evaluate([Self.monthly()], at: "2024-06-05T00:00:00Z")
        let pro = try #require(report.entitlements["pro"])
        #expect(pro.state == .grace)
        #expect(report.isActive("pro"))
        #expect(pro.expiresDate == (try Scenario.date("2024-06-01T00:00:00Z")))
        #expect(pro.graceExpiresDate == (try Scenario.date("2024-06-17T00:00:00Z")))
    }

    @Test("once expired it is locked, still naming the transaction and when it expired")
    func expiredDetails() throws {
        let report = try Scenario.evaluate([Self.monthly()], at: "2024-09-01T00:00:00Z")
        let pro = try #require(report.entitlements["pro"])
        #expect(pro.state == .expired)
        #expect(!report.isActive("pro"))
        #expect(pro.transactionID == "1")
        #expect(pro.expiresDate == (try Scenario.date("2024-06-01T00:00:00Z")))
        #expect(pro.graceExpiresDate == nil)
    }

    @Test("a subscription transaction without expires_date paid for no time: expired, never active or in grace")
    func missingExpiry() throws {
        let purchase = Purchase(product: ProductID.proMonthly, transaction: "1", purchased: "2024-05-01T00:00:00Z")
        let report = try Scenario.evaluate([purchase], at: "2024-05-01T00:00:00Z")
        let pro = try #require(report.entitlements["pro"])
        #expect(pro.state == .expired)
        #expect(pro.expiresDate == (try Scenario.date("2024-05-01T00:00:00Z")))
    }

    @Test(
        "without grace_period there is no grace: expired from expires_date on",
        arguments: [
            ("2024-05-31T23:59:59.999Z", EntitlementState.active),
            ("2024-06-01T00:00:00Z", .expired),
        ])
    func noGracePeriod(now: String, expected: EntitlementState) throws {
        let catalog = try Scenario.catalog(Self.noGraceCatalog)
        let report = try Scenario.evaluate([Self.monthly()], catalog: catalog, at: now)
        #expect(report.state("pro") == expected)
    }

    @Test(
        "a grace period in months is calendar months: P1M after January 31 ends on February 29 (2024)",
        arguments: [
            ("2024-02-29T11:59:59.999Z", EntitlementState.grace),
            ("2024-02-29T12:00:00Z", .expired),
        ])
    func calendarGrace(now: String, expected: EntitlementState) throws {
        let catalog = try Scenario.catalog(
            """
            {"products": [{"id": "com.example.pro.monthly", "type": "auto_renewable", "entitlements": ["pro"],
                           "group": "main", "rank": 1}],
             "grace_period": "P1M"}
            """)
        let purchase = Self.monthly(from: "2023-12-31T12:00:00Z", to: "2024-01-31T12:00:00Z")
        let report = try Scenario.evaluate([purchase], catalog: catalog, at: now)
        #expect(report.state("pro") == expected)
        if expected == .grace {
            #expect(report.entitlements["pro"]?.graceExpiresDate == (try Scenario.date("2024-02-29T12:00:00Z")))
        }
    }

    @Test("a subscription bought after now does not exist yet")
    func boughtAfterNow() throws {
        let report = try Scenario.evaluate([Self.monthly()], at: "2024-04-15T00:00:00Z")
        #expect(report.entitlements.isEmpty)
    }

    @Test("a renewal purchased after now does not count: the earlier period is in grace, not the later one active")
    func renewalAfterNow() throws {
        let purchases = [
            Self.monthly("1", original: "1"),
            Self.monthly("2", from: "2024-06-10T00:00:00Z", to: "2024-07-10T00:00:00Z", original: "1"),
        ]
        let report = try Scenario.evaluate(purchases, at: "2024-06-05T00:00:00Z")
        let pro = try #require(report.entitlements["pro"])
        #expect(pro.state == .grace)
        #expect(pro.transactionID == "1")
        #expect(pro.expiresDate == (try Scenario.date("2024-06-01T00:00:00Z")))
    }
}

@Suite("auto_renewable refunds: revoked, never in grace")
struct AutoRenewableRefundTests {
    @Test("a refund of the transaction covering now revokes the subscription")
    func coveringRefunded() throws {
        let purchase = AutoRenewableTests.monthly(refunded: "2024-05-10T00:00:00Z")
        let report = try Scenario.evaluate([purchase], at: "2024-05-20T00:00:00Z")
        #expect(report.state("pro") == .revoked)
        #expect(!report.isActive("pro"))
        #expect(report.entitlements["pro"]?.transactionID == "1")
    }

    @Test("a refunded subscription is revoked inside what would have been its grace period")
    func refundedNeverInGrace() throws {
        let purchase = AutoRenewableTests.monthly(refunded: "2024-05-10T00:00:00Z")
        let report = try Scenario.evaluate([purchase], at: "2024-06-05T00:00:00Z")
        #expect(report.state("pro") == .revoked)
        #expect(report.entitlements["pro"]?.graceExpiresDate == nil)
    }

    @Test("when the latest renewal was refunded it is revoked, though the earlier periods were not refunded")
    func latestRefunded() throws {
        let purchases = [
            AutoRenewableTests.monthly("1", from: "2024-04-01T00:00:00Z", to: "2024-05-01T00:00:00Z", original: "1"),
            AutoRenewableTests.monthly("2", refunded: "2024-05-03T00:00:00Z", original: "1"),
        ]
        for now in ["2024-05-20T00:00:00Z", "2024-06-05T00:00:00Z", "2024-09-01T00:00:00Z"] {
            let report = try Scenario.evaluate(purchases, at: now)
            #expect(report.state("pro") == .revoked, "at \(now)")
            #expect(report.entitlements["pro"]?.transactionID == "2", "at \(now)")
        }
    }

    @Test(
        "a refund dated after now has not happened yet: active in the period, in grace after it",
        arguments: [
            ("2024-05-20T00:00:00Z", EntitlementState.active),
            ("2024-06-05T00:00:00Z", .grace),
        ])
    func refundAfterNow(now: String, expected: EntitlementState) throws {
        let purchase = AutoRenewableTests.monthly(refunded: "2024-06-10T00:00:00Z")
        let report = try Scenario.evaluate([purchase], at: now)
        #expect(report.state("pro") == expected)
    }

    @Test(
        "a refund counts from its own date: active one millisecond before it, revoked at it",
        arguments: [
            ("2024-05-09T23:59:59.999Z", EntitlementState.active),
            ("2024-05-10T00:00:00Z", .revoked),
        ])
    func refundBoundary(now: String, expected: EntitlementState) throws {
        let purchase = AutoRenewableTests.monthly(refunded: "2024-05-10T00:00:00Z")
        #expect(try Scenario.evaluate([purchase], at: now).state("pro") == expected)
    }

    @Test("an earlier refunded period does not stop the renewal that covers now")
    func earlierRefunded() throws {
        let purchases = [
            AutoRenewableTests.monthly(
                "1", from: "2024-04-01T00:00:00Z", to: "2024-05-01T00:00:00Z", refunded: "2024-04-03T00:00:00Z",
                original: "1"),
            AutoRenewableTests.monthly("2", original: "1"),
        ]
        let report = try Scenario.evaluate(purchases, at: "2024-05-20T00:00:00Z")
        #expect(report.state("pro") == .active)
        #expect(report.entitlements["pro"]?.transactionID == "2")
    }
}

@Suite("auto_renewable renewal chains sharing an original_transaction_id")
struct RenewalChainTests {
    static let chain = [
        AutoRenewableTests.monthly("11", from: "2024-03-01T00:00:00Z", to: "2024-04-01T00:00:00Z", original: "11"),
        AutoRenewableTests.monthly("12", from: "2024-04-01T00:00:00Z", to: "2024-05-01T00:00:00Z", original: "11"),
        AutoRenewableTests.monthly("13", from: "2024-05-01T00:00:00Z", to: "2024-06-01T00:00:00Z", original: "11"),
    ]

    @Test(
        "the entitlement comes from the renewal covering now, or the latest one after the chain ends",
        arguments: [
            ("2024-03-15T00:00:00Z", "11", EntitlementState.active),
            ("2024-03-31T23:59:59.999Z", "11", .active),
            ("2024-04-01T00:00:00Z", "12", .active),
            ("2024-05-01T00:00:00Z", "13", .active),
            ("2024-05-20T00:00:00Z", "13", .active),
            ("2024-06-05T00:00:00Z", "13", .grace),
            ("2024-07-01T00:00:00Z", "13", .expired),
        ])
    func transactionAtEachPoint(now: String, transaction: String, state: EntitlementState) throws {
        let report = try Scenario.evaluate(Self.chain, at: now)
        let pro = try #require(report.entitlements["pro"])
        #expect(pro.state == state)
        #expect(pro.transactionID == transaction)
        #expect(pro.originalTransactionID == "11")
    }

    @Test("the order of the renewals in the receipt does not matter")
    func orderInReceipt() throws {
        let report = try Scenario.evaluate(Self.chain.reversed(), at: "2024-05-20T00:00:00Z")
        #expect(report.entitlements["pro"]?.transactionID == "13")
        #expect(report.entitlements["pro"]?.expiresDate == (try Scenario.date("2024-06-01T00:00:00Z")))
    }
}
