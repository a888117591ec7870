import Entitlements
import Foundation
import ReceiptJWS
import ReceiptModel
import ReceiptService
import StrictJSON
import Testing

/// What each `notificationType` changes, delivered to the running server on both ledger stores: the answer's
/// `effects`, then the customer's state as the entitlements endpoint, `/verifyReceipt` and `/healthz` show it. The
/// subscription is the fixture's monthly one from 2024-06-01; the customer is the app's account token.
@Suite("Each notification type's effect")
struct AppleNotificationTypeTests {
    typealias Fixture = AppleNotificationFixture
    static let customer = "5b1e1c4e-9d9a-4f0b-a0de-2f1b3c4d5e6f"
    static let alreadyRecorded = JSONValue.string("transaction 7000 already recorded as it is")
    static let keptRenewal = JSONValue.string("kept renewal info of 7000")

    @Test("OFFER_REDEEMED records the transaction: the entitlement is active", arguments: LedgerKind.allCases)
    func offerRedeemed(ledger: LedgerKind) throws {
        let fixture = try Fixture(ledger)
        let reply = try fixture.deliver(
            Fixture.body(
                "OFFER_REDEEMED", subtype: "RESUBSCRIBE", signed: Fixture.day(30),
                transaction: Fixture.period(1, token: Self.customer)))
        #expect(reply.status == 200)
        #expect(try reply.json()["effects"] == .array([.string("recorded transaction 7000-1")]))
        #expect(try fixture.state(Self.customer, at: Fixture.day(40)) == "active")
        #expect(try fixture.ledgerTransactions() == .integer(1))
    }

    @Test(
        "OFFER_REDEEMED keeps a promotional offer's identifier: /verifyReceipt shows it as promotional_offer_id",
        arguments: LedgerKind.allCases)
    func offerRedeemedKeepsOfferIdentifier(ledger: LedgerKind) throws {
        let fixture = try Fixture(ledger)
        #expect(
            try fixture.deliver(Fixture.body("SUBSCRIBED", transaction: Fixture.period(0, token: Self.customer)))
                .status == 200)
        var redeemed = Fixture.period(1, token: Self.customer)
        redeemed.purchase.promotionalOfferID = "winter-half"
        let reply = try fixture.deliver(
            Fixture.body("OFFER_REDEEMED", subtype: "RESUBSCRIBE", signed: Fixture.day(30), transaction: redeemed))
        #expect(reply.status == 200)
        let answer = try fixture.verifyReceipt([Fixture.period(0).purchase])
        #expect(answer["latest_receipt_info"]?.transactionIDs == ["7000", "7000-1"])
        #expect(answer["latest_receipt_info"]?[0]?["promotional_offer_id"] == nil)
        #expect(answer["latest_receipt_info"]?[1]?["promotional_offer_id"] == .string("winter-half"))
    }

    @Test(
        "DID_CHANGE_RENEWAL_PREF UPGRADE records the upgraded transaction: the better product is active at once",
        arguments: LedgerKind.allCases)
    func renewalPreferenceUpgrade(ledger: LedgerKind) throws {
        let fixture = try Fixture.tiered(ledger)
        #expect(
            try fixture.deliver(Fixture.body("SUBSCRIBED", transaction: Fixture.period(0, token: Self.customer)))
                .status == 200)
        let upgraded = Fixture.subscription(Fixture.plus, id: "7000-1", bought: 10, lineItem: 2, token: Self.customer)
        let reply = try fixture.deliver(
            Fixture.body(
                "DID_CHANGE_RENEWAL_PREF", subtype: "UPGRADE", signed: Fixture.day(10),
                transactionPayload: Fixture.transactionPayload(upgraded, signed: Fixture.day(10)),
                renewalPayload: Fixture.renewalPayload(
                    product: Fixture.plus, autoRenewProduct: Fixture.plus, signed: Fixture.day(10))))
        #expect(reply.status == 200)
        #expect(try reply.json()["effects"] == .array([.string("recorded transaction 7000-1"), Self.keptRenewal]))
        let entitlement = try fixture.entitlement(Self.customer, at: Fixture.day(35))
        #expect(entitlement?["state"] == .string("active"))
        #expect(entitlement?["product_id"] == .string(Fixture.plus))
        #expect(entitlement?["transaction_id"] == .string("7000-1"))
        #expect(try fixture.ledgerTransactions() == .integer(2))
        let answer = try fixture.verifyReceipt([Fixture.period(0).purchase])
        #expect(answer["latest_receipt_info"]?.transactionIDs == ["7000", "7000-1"])
        #expect(answer["pending_renewal_info"]?[0]?["product_id"] == .string(Fixture.plus))
        #expect(answer["pending_renewal_info"]?[0]?["auto_renew_product_id"] == .string(Fixture.plus))
    }

    @Test(
        "DID_CHANGE_RENEWAL_PREF DOWNGRADE keeps renewal info naming the lesser product as the next one",
        arguments: LedgerKind.allCases)
    func renewalPreferenceDowngrade(ledger: LedgerKind) throws {
        let fixture = try Fixture.tiered(ledger)
        let current = Fixture.period(0, token: Self.customer)
        #expect(try fixture.deliver(Fixture.body("SUBSCRIBED", transaction: current)).status == 200)
        let reply = try fixture.deliver(
            Fixture.body(
                "DID_CHANGE_RENEWAL_PREF", subtype: "DOWNGRADE", signed: Fixture.day(12),
                transactionPayload: Fixture.transactionPayload(current, signed: Fixture.day(12)),
                renewalPayload: Fixture.renewalPayload(autoRenewProduct: Fixture.lite, signed: Fixture.day(12))))
        #expect(reply.status == 200)
        #expect(try reply.json()["effects"] == .array([Self.alreadyRecorded, Self.keptRenewal]))
        let pending = try fixture.verifyReceipt([current.purchase])["pending_renewal_info"]
        #expect(pending?[0]?["auto_renew_product_id"] == .string(Fixture.lite))
        #expect(pending?[0]?["product_id"] == .string(Fixture.monthly))
        #expect(pending?[0]?["auto_renew_status"] == .string("1"))
        // A downgrade takes effect at the next renewal: the current period keeps its product.
        #expect(try fixture.entitlement(Self.customer, at: Fixture.day(20))?["product_id"] == .string(Fixture.monthly))
        #expect(try fixture.ledgerTransactions() == .integer(1))
    }

    @Test(
        "RENEWAL_EXTENDED records its transaction with the extended expiry: active past the period's end",
        arguments: LedgerKind.allCases)
    func renewalExtended(ledger: LedgerKind) throws {
        let fixture = try Fixture(ledger)
        var extended = Fixture.period(0, token: Self.customer)
        extended.purchase.expiresDate = Fixture.day(37)
        let reply = try fixture.deliver(
            Fixture.body("RENEWAL_EXTENDED", signed: Fixture.day(20), transaction: extended))
        #expect(reply.status == 200)
        #expect(try reply.json()["effects"] == .array([.string("recorded transaction 7000")]))
        #expect(try fixture.state(Self.customer, at: Fixture.day(33)) == "active")
        #expect(try fixture.state(Self.customer, at: Fixture.day(37)) == "expired")
        let latest = try fixture.verifyReceipt([Fixture.period(0).purchase])["latest_receipt_info"]
        #expect(latest?[0]?["expires_date_ms"] == .string(String(Fixture.day(37).millisecondsSince1970)))
    }

    @Test(
        "RENEWAL_EXTENDED after the transaction was recorded moves its expiry: active past the original expiry",
        arguments: LedgerKind.allCases)
    func renewalExtendedAfterRecorded(ledger: LedgerKind) throws {
        let fixture = try Fixture(ledger)
        var extended = Fixture.period(0, token: Self.customer)
        #expect(try fixture.deliver(Fixture.body("SUBSCRIBED", transaction: extended)).status == 200)
        #expect(try fixture.state(Self.customer, at: Fixture.day(33)) == "expired")
        extended.purchase.expiresDate = Fixture.day(37)
        let reply = try fixture.deliver(
            Fixture.body("RENEWAL_EXTENDED", signed: Fixture.day(20), transaction: extended))
        #expect(reply.status == 200)
        guard case .array(let effects)? = try reply.json()["effects"] else {
            Issue.record("no effects: \(reply.text)")
            return
        }
        #expect(
            effects == [
                .string(
                    "extended the expiry of transaction 7000 from 2024-07-01T00:00:00Z to 2024-07-08T00:00:00Z")
            ])
        #expect(try fixture.state(Self.customer, at: Fixture.day(33)) == "active")
        let latest = try fixture.verifyReceipt([Fixture.period(0).purchase])["latest_receipt_info"]
        #expect(latest?[0]?["expires_date_ms"] == .string(String(Fixture.day(37).millisecondsSince1970)))
        #expect(try fixture.ledgerTransactions() == .integer(1))
    }

    @Test(
        "extensions delivered out of order end at the latest expiry; later notifications carrying it change nothing",
        arguments: LedgerKind.allCases)
    func renewalExtensionsOutOfOrder(ledger: LedgerKind) throws {
        let fixture = try Fixture(ledger)
        var subscription = Fixture.period(0, token: Self.customer)
        #expect(try fixture.deliver(Fixture.body("SUBSCRIBED", transaction: subscription)).status == 200)
        subscription.purchase.expiresDate = Fixture.day(44)
        let second = try Fixture.body("RENEWAL_EXTENDED", signed: Fixture.day(25), transaction: subscription)
        subscription.purchase.expiresDate = Fixture.day(37)
        let first = try Fixture.body("RENEWAL_EXTENDED", signed: Fixture.day(20), transaction: subscription)
        #expect(try fixture.deliver(second).status == 200)
        let late = try fixture.deliver(first)
        #expect(try late.json()["effects"] == .array([.string("transaction 7000 already recorded as it is")]))
        subscription.purchase.expiresDate = Fixture.day(44)
        let status = try fixture.deliver(
            Fixture.body(
                "DID_CHANGE_RENEWAL_STATUS", subtype: "AUTO_RENEW_DISABLED", signed: Fixture.day(26),
                transaction: subscription))
        #expect(try status.json()["effects"] == .array([.string("transaction 7000 already recorded as it is")]))
        #expect(try fixture.state(Self.customer, at: Fixture.day(43)) == "active")
        #expect(try fixture.state(Self.customer, at: Fixture.day(44)) == "expired")
    }

    @Test(
        "REVOKE (Family Sharing withdrawn) cancels at revocationDate: revoked after it, active before",
        arguments: LedgerKind.allCases)
    func revokeFamilySharing(ledger: LedgerKind) throws {
        let fixture = try Fixture(ledger)
        var shared = Fixture.period(0, token: Self.customer)
        shared.revoked = Fixture.day(5)
        var payload = Fixture.transactionPayload(shared, signed: Fixture.day(5))
        payload["inAppOwnershipType"] = .string("FAMILY_SHARED")
        let reply = try fixture.deliver(
            Fixture.body("REVOKE", signed: Fixture.day(5), transactionPayload: payload, renewalPayload: nil))
        #expect(reply.status == 200)
        #expect(
            try reply.json()["effects"]
                == .array([.string("recorded transaction 7000"), .string("recorded the refund of transaction 7000")]))
        #expect(try fixture.state(Self.customer, at: Fixture.day(10)) == "revoked")
        #expect(try fixture.state(Self.customer, at: Fixture.day(4)) == "active")
    }

    @Test(
        "a REFUND or REVOKE whose transaction has no revocationDate is refused 400 invalid_notification, storing nothing",
        arguments: LedgerKind.allCases, ["REFUND", "REVOKE"])
    func refundWithoutRevocationDate(ledger: LedgerKind, type: String) throws {
        let fixture = try Fixture(ledger)
        let reply = try fixture.deliver(
            Fixture.body(type, signed: Fixture.day(5), transaction: Fixture.period(0, token: Self.customer)))
        #expect(reply.status == 400)
        #expect(reply.errorCode == "invalid_notification")
        #expect(try fixture.notifications().isEmpty)
        #expect(try fixture.ledgerTransactions() == .integer(0))
    }

    @Test(
        "GRACE_PERIOD_EXPIRED replaces the grace renewal info: expired where it was grace",
        arguments: LedgerKind.allCases)
    func gracePeriodExpired(ledger: LedgerKind) throws {
        let fixture = try Fixture(ledger)
        let transaction = Fixture.period(0, token: Self.customer)
        let failing = Fixture.Renewal(
            billingRetry: true, graceEnds: Fixture.day(36), expirationIntent: 2, signed: Fixture.day(30))
        #expect(
            try fixture.deliver(
                Fixture.body(
                    "DID_FAIL_TO_RENEW", subtype: "GRACE_PERIOD", signed: Fixture.day(30), transaction: transaction,
                    renewal: failing)
            ).status == 200)
        #expect(try fixture.state(Self.customer, at: Fixture.day(34)) == "grace")
        let ended = Fixture.Renewal(billingRetry: false, expirationIntent: 2, signed: Fixture.day(33))
        let reply = try fixture.deliver(
            Fixture.body("GRACE_PERIOD_EXPIRED", signed: Fixture.day(33), transaction: transaction, renewal: ended))
        #expect(reply.status == 200)
        #expect(try reply.json()["effects"] == .array([Self.alreadyRecorded, Self.keptRenewal]))
        #expect(try fixture.state(Self.customer, at: Fixture.day(34)) == "expired")
        let pending = try fixture.verifyReceipt([transaction.purchase])["pending_renewal_info"]
        #expect(pending?[0]?["is_in_billing_retry_period"] == .string("0"))
        #expect(pending?[0]?["grace_period_expires_date_ms"] == nil)
    }

    @Test(
        "EXPIRED VOLUNTARY keeps its renewal info (auto-renew off, intent 1); the entitlement expires at the end",
        arguments: LedgerKind.allCases)
    func expiredVoluntary(ledger: LedgerKind) throws {
        let fixture = try Fixture(ledger)
        let transaction = Fixture.period(0, token: Self.customer)
        #expect(try fixture.deliver(Fixture.body("SUBSCRIBED", transaction: transaction)).status == 200)
        let off = Fixture.Renewal(autoRenews: false, expirationIntent: 1, signed: Fixture.day(30))
        let reply = try fixture.deliver(
            Fixture.body(
                "EXPIRED", subtype: "VOLUNTARY", signed: Fixture.day(30), transaction: transaction, renewal: off))
        #expect(reply.status == 200)
        #expect(try reply.json()["effects"] == .array([Self.alreadyRecorded, Self.keptRenewal]))
        let pending = try fixture.verifyReceipt([transaction.purchase])["pending_renewal_info"]
        #expect(pending?[0]?["auto_renew_status"] == .string("0"))
        #expect(pending?[0]?["expiration_intent"] == .string("1"))
        #expect(try fixture.state(Self.customer, at: Fixture.day(29)) == "active")
        #expect(try fixture.state(Self.customer, at: Fixture.day(31)) == "expired")
    }

    @Test(
        "PRICE_INCREASE keeps renewal info with priceIncreaseStatus: pending_renewal_info's price_consent_status",
        arguments: LedgerKind.allCases)
    func priceIncrease(ledger: LedgerKind) throws {
        let fixture = try Fixture(ledger)
        let transaction = Fixture.period(0, token: Self.customer)
        #expect(try fixture.deliver(Fixture.body("SUBSCRIBED", transaction: transaction)).status == 200)
        for (subtype, status, day) in [("PENDING", Int64(0), 20), ("ACCEPTED", Int64(1), 22)] {
            let reply = try fixture.deliver(
                Fixture.body(
                    "PRICE_INCREASE", subtype: subtype, signed: Fixture.day(day),
                    transactionPayload: Fixture.transactionPayload(transaction, signed: Fixture.day(day)),
                    renewalPayload: Fixture.renewalPayload(signed: Fixture.day(day)) { $0.priceIncreaseStatus = status }
                ))
            #expect(reply.status == 200)
            #expect(try reply.json()["effects"] == .array([Self.alreadyRecorded, Self.keptRenewal]))
            let pending = try fixture.verifyReceipt([transaction.purchase])["pending_renewal_info"]
            #expect(pending?[0]?["price_consent_status"] == .string(String(status)), "\(subtype)")
        }
        #expect(try fixture.state(Self.customer, at: Fixture.day(25)) == "active")
    }

    @Test(
        "REFUND_DECLINED and types Apple adds later are stored and listed, and change nothing",
        arguments: LedgerKind.allCases, ["REFUND_DECLINED", "SOME_NEW_TYPE"])
    func storedOnly(ledger: LedgerKind, type: String) throws {
        let fixture = try Fixture(ledger)
        #expect(
            try fixture.deliver(Fixture.body("SUBSCRIBED", transaction: Fixture.period(0, token: Self.customer)))
                .status == 200)
        // It carries a transaction and renewal info the ledger does not hold: neither is kept.
        let reply = try fixture.deliver(
            Fixture.body(
                type, signed: Fixture.day(31), transaction: Fixture.period(1, token: Self.customer),
                renewal: Fixture.Renewal(autoRenews: false, expirationIntent: 1, signed: Fixture.day(31))))
        #expect(reply.status == 200)
        #expect(try reply.json()["effects"] == .array([]))
        #expect(try reply.json()["customer_id"] == .null)
        #expect(try fixture.notifications().map { $0["notification_type"] } == [.string(type), .string("SUBSCRIBED")])
        #expect(try fixture.ledgerTransactions() == .integer(1))
        #expect(try fixture.state(Self.customer, at: Fixture.day(10)) == "active")
        #expect(try fixture.state(Self.customer, at: Fixture.day(40)) == "expired")
        #expect(try fixture.verifyReceipt([Fixture.period(0).purchase])["pending_renewal_info"] == nil)
    }

    @Test(
        "a renewal sequence delivered twice and out of order (2, 0, 1, 2, 0) ends as delivered in order",
        arguments: LedgerKind.allCases)
    func outOfOrderDelivery(ledger: LedgerKind) throws {
        let bodies = try (0..<3).map { period in
            try Fixture.body(
                period == 0 ? "SUBSCRIBED" : "DID_RENEW", signed: Fixture.day(30 * period),
                transaction: Fixture.period(period, token: Self.customer),
                renewal: Fixture.Renewal(signed: Fixture.day(30 * period)))
        }
        let inOrder = try Fixture(ledger)
        for body in bodies { #expect(try inOrder.deliver(body).json()["duplicate"] == .bool(false)) }
        let shuffled = try Fixture(ledger)
        for (index, position) in [2, 0, 1, 2, 0].enumerated() {
            let reply = try shuffled.deliver(bodies[position])
            #expect(reply.status == 200)
            #expect(try reply.json()["duplicate"] == .bool(index >= 3), "delivery \(index)")
        }
        for day in [10, 40, 70, 89, 90, 95] {
            let expected = try inOrder.state(Self.customer, at: Fixture.day(day))
            #expect(try shuffled.state(Self.customer, at: Fixture.day(day)) == expected, "day \(day)")
        }
        #expect(try shuffled.state(Self.customer, at: Fixture.day(70)) == "active")
        #expect(try shuffled.state(Self.customer, at: Fixture.day(95)) == "expired")
        let receipt = [Fixture.period(0).purchase]
        let expected = try inOrder.verifyReceipt(receipt)
        let answer = try shuffled.verifyReceipt(receipt)
        #expect(answer["latest_receipt_info"]?.transactionIDs == ["7000", "7000-1", "7000-2"])
        #expect(answer["latest_receipt_info"] == expected["latest_receipt_info"])
        #expect(answer["pending_renewal_info"] == expected["pending_renewal_info"])
        #expect(try shuffled.notifications().count == 3)
        #expect(try shuffled.ledgerTransactions() == .integer(3))
    }
}

extension AppleNotificationFixture {
    /// A better and a lesser product than ``monthly`` in its group, for upgrades and downgrades.
    static let plus = "com.example.pro.plus"
    static let lite = "com.example.pro.lite"
    static let tieredCatalog = """
        {"bundle_id": "com.example.game", "products": [
          {"id": "com.example.pro.plus", "type": "auto_renewable", "entitlements": ["pro"], "group": "pro", "rank": 1},
          {"id": "com.example.pro.monthly", "type": "auto_renewable", "entitlements": ["pro"], "group": "pro", "rank": 2},
          {"id": "com.example.pro.lite", "type": "auto_renewable", "entitlements": ["pro"], "group": "pro", "rank": 3},
          {"id": "com.example.removeads", "type": "non_consumable", "entitlements": ["no_ads"]}
        ]}
        """

    /// The fixture's service with ``tieredCatalog`` as the app's catalog.
    static func tiered(_ ledger: LedgerKind) throws -> AppleNotificationFixture {
        let catalog = try Catalog(json: Array(tieredCatalog.utf8))
        return try AppleNotificationFixture(ledger) { $0.catalogs = ["game": catalog] }
    }

    /// A monthly period of `product` in the subscription `original`, bought on day `bought`.
    static func subscription(
        _ product: String, id: String, bought: Int, lineItem: Int64, original: String = "7000", token: String? = nil
    ) -> Purchase {
        Purchase(
            purchase: InAppPurchase(
                productID: product, transactionID: id, purchaseDate: day(bought), quantity: 1,
                originalTransactionID: original, originalPurchaseDate: day(0), expiresDate: day(bought + 30),
                webOrderLineItemID: lineItem),
            appAccountToken: token)
    }

    /// The renewal info payload of the subscription `original` of `product`, renewing to `autoRenewProduct`
    /// (`product` when nil), with auto-renew on; `adjust` sets what else it says.
    static func renewalPayload(
        original: String = "7000", product: String = monthly, autoRenewProduct: String? = nil, signed: ReceiptDate,
        adjust: (inout RenewalInfoFields) -> Void = { _ in }
    ) -> JSONObject {
        var fields = RenewalInfoFields(originalTransactionID: original, productID: product)
        fields.autoRenewProductID = autoRenewProduct ?? product
        fields.autoRenewStatus = 1
        adjust(&fields)
        return SignedRenewalInfo.payload(fields, environment: .production, signedDate: signed)
    }

    /// A notification body for the app in Production that carries these transaction and renewal info payloads as
    /// given, for what ``body(_:subtype:uuid:signed:transaction:renewal:bundleID:environment:appAppleID:)`` cannot
    /// say.
    static func body(
        _ type: String, subtype: String? = nil, signed: ReceiptDate, transactionPayload: JSONObject?,
        renewalPayload: JSONObject?
    ) throws -> String {
        var content = NotificationContent(notificationType: type, signedDate: signed, bundleID: bundleID)
        content.subtype = subtype
        content.appAppleID = appAppleID
        content.transaction = transactionPayload
        content.renewalInfo = renewalPayload
        return JSONValue.object(try signer().signNotification(content)).serialized()
    }

    /// `/verifyReceipt`'s answer for a Production receipt of the app holding `purchases`.
    func verifyReceipt(_ purchases: [InAppPurchase]) throws -> JSONValue {
        let receipt = Receipt(
            bundleID: Self.bundleID, creationDate: Self.day(1), receiptType: "Production", inAppPurchases: purchases)
        let reply = try service.post(
            "/verifyReceipt", json: ServiceFixture.verifyRequest(try ServiceFixture.signed(receipt)))
        let answer = try reply.json()
        guard reply.status == 200, answer["status"] == .integer(0) else {
            throw FixtureError("verifyReceipt: \(reply.status) \(reply.text)")
        }
        return answer
    }

    /// `/healthz`'s count of the ledger's transactions.
    func ledgerTransactions() throws -> JSONValue? {
        try service.send("GET", "/healthz").json()["ledger_transactions"]
    }

    /// The customer's entitlement `name` at `now` as the entitlements endpoint shows it, nil when there is none.
    func entitlement(_ customer: String, _ name: String = "pro", at now: ReceiptDate) throws -> JSONValue? {
        let reply = try service.send(
            "GET", "/v1/customers/\(customer)/entitlements?bundle_id=\(Self.bundleID)&now=\(now.rfc3339)")
        guard reply.status == 200 else { throw FixtureError("entitlements: \(reply.status) \(reply.text)") }
        return try reply.json()["entitlements"]?[name]
    }
}
