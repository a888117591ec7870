import Foundation
import ReceiptJWS
import ReceiptModel
import ReceiptService
import StrictJSON
import Testing

/// App Store Server Notifications V2 delivered to the running server, on both ledger stores. The subscription is
/// monthly from 2024-06-01 (``AppleNotificationFixture/period(_:original:token:)``); the customer is the app's
/// account token unless a test says otherwise.
@Suite("POST /v1/notifications/apple: Apple's notifications feed the customer's state")
struct AppleNotificationTests {
    typealias Fixture = AppleNotificationFixture
    static let customer = "5b1e1c4e-9d9a-4f0b-a0de-2f1b3c4d5e6f"

    @Test(
        "SUBSCRIBED records the transaction for its appAccountToken: 200 after the commit, the entitlement active",
        arguments: LedgerKind.allCases)
    func subscribedRecordsTransaction(ledger: LedgerKind) throws {
        let fixture = try Fixture(ledger)
        let reply = try fixture.deliver(
            Fixture.body(
                "SUBSCRIBED", subtype: "INITIAL_BUY",
                transaction: Fixture.period(0, token: Self.customer.uppercased())))
        #expect(reply.status == 200)
        #expect(try reply.json()["customer_id"] == .string(Self.customer))
        #expect(try reply.json()["effects"] == .array([.string("recorded transaction 7000")]))
        #expect(try fixture.state(Self.customer, at: Fixture.day(10)) == "active")
        #expect(try fixture.state(Self.customer, at: Fixture.day(31)) == "expired")
    }

    @Test(
        "the same notificationUUID delivered twice answers 200 both times and changes nothing the second time",
        arguments: LedgerKind.allCases)
    func duplicateChangesNothing(ledger: LedgerKind) throws {
        let fixture = try Fixture(ledger)
        let body = try Fixture.body("SUBSCRIBED", transaction: Fixture.period(0, token: Self.customer))
        #expect(try fixture.deliver(body).json()["duplicate"] == .bool(false))
        let again = try fixture.deliver(body)
        #expect(again.status == 200)
        #expect(try again.json()["duplicate"] == .bool(true))
        #expect(try again.json()["effects"] == .array([.string("recorded transaction 7000")]))
        #expect(try fixture.notifications().count == 1)
        #expect(try fixture.service.send("GET", "/healthz").json()["ledger_transactions"] == .integer(1))
    }

    @Test(
        "DID_RENEW adds the renewal to latest_receipt_info and keeps renewal info for pending_renewal_info",
        arguments: LedgerKind.allCases)
    func renewalReachesVerifyReceipt(ledger: LedgerKind) throws {
        let fixture = try Fixture(ledger)
        #expect(
            try fixture.deliver(Fixture.body("SUBSCRIBED", transaction: Fixture.period(0, token: Self.customer)))
                .status == 200)
        let renewal = Fixture.Renewal(signed: Fixture.day(30))
        #expect(
            try fixture.deliver(
                Fixture.body(
                    "DID_RENEW", signed: Fixture.day(30), transaction: Fixture.period(1, token: Self.customer),
                    renewal: renewal)
            ).status == 200)
        let receipt = Receipt(
            bundleID: Fixture.bundleID, creationDate: Fixture.day(1), receiptType: "Production",
            inAppPurchases: [Fixture.period(0).purchase])
        let answer = try fixture.service.post(
            "/verifyReceipt", json: ServiceFixture.verifyRequest(try ServiceFixture.signed(receipt))
        ).json()
        #expect(answer["status"] == .integer(0))
        guard case .array(let latest)? = answer["latest_receipt_info"] else {
            Issue.record("no latest_receipt_info")
            return
        }
        #expect(latest.map { $0["transaction_id"] } == [.string("7000"), .string("7000-1")])
        let pending = try #require(answer["pending_renewal_info"])
        #expect(
            pending
                == .array([
                    .object(
                        JSONObject([
                            "auto_renew_product_id": .string(Fixture.monthly),
                            "original_transaction_id": .string("7000"),
                            "product_id": .string(Fixture.monthly), "auto_renew_status": .string("1"),
                        ]))
                ]))
    }

    @Test(
        "renewal info is replaced only by one signed later: delivered newest first, the older changes nothing",
        arguments: LedgerKind.allCases)
    func renewalInfoOutOfOrder(ledger: LedgerKind) throws {
        let fixture = try Fixture(ledger)
        let transaction = Fixture.period(0, token: Self.customer)
        let off = Fixture.Renewal(autoRenews: false, expirationIntent: 1, signed: Fixture.day(12))
        let on = Fixture.Renewal(autoRenews: true, signed: Fixture.day(10))
        let newer = try fixture.deliver(
            Fixture.body(
                "DID_CHANGE_RENEWAL_STATUS", subtype: "AUTO_RENEW_DISABLED", signed: Fixture.day(12),
                transaction: transaction, renewal: off))
        #expect(try newer.json()["effects"]?[1] == .string("kept renewal info of 7000"))
        let older = try fixture.deliver(
            Fixture.body(
                "DID_CHANGE_RENEWAL_STATUS", subtype: "AUTO_RENEW_ENABLED", signed: Fixture.day(10),
                transaction: transaction, renewal: on))
        #expect(older.status == 200)
        #expect(
            try older.json()["effects"]?[1]
                == .string("renewal info of 7000 not replaced: one signed as late or later is stored"))
        let receipt = Receipt(
            bundleID: Fixture.bundleID, creationDate: Fixture.day(1), receiptType: "Production",
            inAppPurchases: [Fixture.period(0).purchase])
        let answer = try fixture.service.post(
            "/verifyReceipt", json: ServiceFixture.verifyRequest(try ServiceFixture.signed(receipt))
        ).json()
        #expect(answer["pending_renewal_info"]?[0]?["auto_renew_status"] == .string("0"))
        #expect(answer["pending_renewal_info"]?[0]?["expiration_intent"] == .string("1"))
    }

    @Test("REFUND revokes at revocationDate; REFUND_REVERSED withdraws the refund", arguments: LedgerKind.allCases)
    func refundAndReversal(ledger: LedgerKind) throws {
        let fixture = try Fixture(ledger)
        var refunded = Fixture.period(0, token: Self.customer)
        #expect(try fixture.deliver(Fixture.body("SUBSCRIBED", transaction: refunded)).status == 200)
        refunded.revoked = Fixture.day(5)
        let refund = try fixture.deliver(Fixture.body("REFUND", signed: Fixture.day(5), transaction: refunded))
        #expect(refund.status == 200)
        #expect(try fixture.state(Self.customer, at: Fixture.day(10)) == "revoked")
        #expect(try fixture.state(Self.customer, at: Fixture.day(4)) == "active")
        refunded.revoked = nil
        let reversed = try fixture.deliver(
            Fixture.body("REFUND_REVERSED", signed: Fixture.day(6), transaction: refunded))
        #expect(try reversed.json()["effects"]?[1] == .string("withdrew the refund of transaction 7000"))
        #expect(try fixture.state(Self.customer, at: Fixture.day(10)) == "active")
    }

    @Test(
        "DID_FAIL_TO_RENEW with GRACE_PERIOD keeps access until Apple's grace period ends, then it is expired",
        arguments: LedgerKind.allCases)
    func billingRetryGrace(ledger: LedgerKind) throws {
        let fixture = try Fixture(ledger)
        let failing = Fixture.Renewal(
            billingRetry: true, graceEnds: Fixture.day(36), expirationIntent: 2, signed: Fixture.day(30))
        #expect(
            try fixture.deliver(
                Fixture.body(
                    "DID_FAIL_TO_RENEW", subtype: "GRACE_PERIOD", signed: Fixture.day(30),
                    transaction: Fixture.period(0, token: Self.customer), renewal: failing)
            ).status == 200)
        #expect(try fixture.state(Self.customer, at: Fixture.day(33)) == "grace")
        #expect(try fixture.state(Self.customer, at: Fixture.day(36)) == "expired")
    }

    @Test(
        "a notification without appAccountToken goes to apple:ORIGINAL until a signed transaction names the customer",
        arguments: LedgerKind.allCases)
    func placeholderCustomerAdopted(ledger: LedgerKind) throws {
        let fixture = try Fixture(ledger)
        let reply = try fixture.deliver(Fixture.body("SUBSCRIBED", transaction: Fixture.period(0)))
        #expect(try reply.json()["customer_id"] == .string("apple:7000"))
        #expect(try fixture.state("apple:7000", at: Fixture.day(10)) == "active")
        let renewed = try fixture.deliver(
            Fixture.body("DID_RENEW", signed: Fixture.day(30), transaction: Fixture.period(1)))
        #expect(try renewed.json()["customer_id"] == .string("apple:7000"))
        let jws = try Fixture.signedTransaction(Fixture.period(0))
        let adopted = try fixture.service.post(
            "/v1/transactions", json: #"{"customer_id":"player-1","signed_transaction":"\#(jws)"}"#)
        #expect(adopted.status == 201)
        #expect(try fixture.state("player-1", at: Fixture.day(40)) == "active")
        #expect(try fixture.state("apple:7000", at: Fixture.day(40)) == nil)
    }

    @Test(
        "TEST and other types are stored and answered 200 without changing the ledger", arguments: LedgerKind.allCases)
    func testNotificationStored(ledger: LedgerKind) throws {
        let fixture = try Fixture(ledger)
        let reply = try fixture.deliver(Fixture.body("TEST"))
        #expect(reply.status == 200)
        #expect(try reply.json()["effects"] == .array([]))
        let consumption = try fixture.deliver(
            Fixture.body("CONSUMPTION_REQUEST", transaction: Fixture.period(0, token: Self.customer)))
        #expect(consumption.status == 200)
        #expect(try fixture.service.send("GET", "/healthz").json()["ledger_transactions"] == .integer(0))
        #expect(
            try fixture.notifications().map { $0["notification_type"] } == [
                .string("CONSUMPTION_REQUEST"), .string("TEST"),
            ])
    }

    @Test(
        "a tampered signature is refused with 403 invalid_signature and nothing is stored",
        arguments: LedgerKind.allCases)
    func tamperedSignature(ledger: LedgerKind) throws {
        let fixture = try Fixture(ledger)
        let body = try Fixture.body("SUBSCRIBED", transaction: Fixture.period(0, token: Self.customer))
        let payload = try #require(body.range(of: #"."#, options: .backwards))
        let flipped = body[payload.upperBound] == "A" ? "B" : "A"
        let tampered = body.replacingCharacters(
            in: payload.upperBound..<body.index(after: payload.upperBound), with: flipped)
        let reply = try fixture.deliver(tampered)
        #expect(reply.status == 403)
        #expect(reply.errorCode == "invalid_signature")
        #expect(try fixture.notifications().isEmpty)
        #expect(try fixture.service.send("GET", "/healthz").json()["ledger_transactions"] == .integer(0))
    }

    @Test(
        "a notification for another app, another environment or another app Apple id is refused with 403",
        arguments: LedgerKind.allCases,
        [
            ("bundle", "wrong_bundle_id"), ("environment", "wrong_environment"), ("app", "wrong_app_apple_id"),
            ("no-app", "wrong_app_apple_id"),
        ])
    func foreignNotification(ledger: LedgerKind, change: (String, String)) throws {
        let (change, code) = change
        let fixture = try Fixture(ledger)
        let purchase = Fixture.period(0, token: Self.customer)
        let body: String
        switch change {
        case "bundle": body = try Fixture.body("SUBSCRIBED", transaction: purchase, bundleID: "com.other.app")
        case "environment": body = try Fixture.body("SUBSCRIBED", transaction: purchase, environment: .sandbox)
        case "app": body = try Fixture.body("SUBSCRIBED", transaction: purchase, appAppleID: 99)
        default: body = try Fixture.body("SUBSCRIBED", transaction: purchase, appAppleID: nil)
        }
        let reply = try fixture.deliver(body)
        #expect(reply.status == 403)
        #expect(reply.errorCode == code)
        #expect(try fixture.notifications().isEmpty)
    }

    @Test("without apple_notifications configured the endpoint answers 501 notifications_not_configured")
    func notConfigured() throws {
        let fixture = try Fixture(.sqlite) { $0.appleNotifications = nil }
        let reply = try fixture.deliver(try Fixture.body("TEST"))
        #expect(reply.status == 501)
        #expect(reply.errorCode == "notifications_not_configured")
    }

    @Test(
        "GET /v1/notifications lists newest first, pages by next_cursor and filters by since",
        arguments: LedgerKind.allCases)
    func listingPages(ledger: LedgerKind) throws {
        let fixture = try Fixture(ledger)
        for index in 0..<3 {
            #expect(
                try fixture.deliver(Fixture.body("TEST", uuid: "00000000-0000-4000-8000-00000000000\(index)")).status
                    == 200)
        }
        let first = try fixture.service.send("GET", "/v1/notifications?bundle_id=\(Fixture.bundleID)&limit=2").json()
        #expect(first["notifications"]?[0]?["notification_uuid"] == .string("00000000-0000-4000-8000-000000000002"))
        #expect(first["notifications"]?[1]?["notification_uuid"] == .string("00000000-0000-4000-8000-000000000001"))
        guard case .string(let cursor)? = first["next_cursor"] else {
            Issue.record("no next_cursor on a full page")
            return
        }
        let second = try fixture.service.send(
            "GET", "/v1/notifications?bundle_id=\(Fixture.bundleID)&limit=2&cursor=\(cursor)"
        ).json()
        #expect(second["notifications"]?[0]?["notification_uuid"] == .string("00000000-0000-4000-8000-000000000000"))
        #expect(second["next_cursor"] == .null)
        let future = try fixture.service.send(
            "GET", "/v1/notifications?bundle_id=\(Fixture.bundleID)&since=2999-01-01T00:00:00Z"
        ).json()
        #expect(future["notifications"] == .array([]))
        #expect(try fixture.service.send("GET", "/v1/notifications?bundle_id=x", token: nil).status == 401)
    }

    @Test(
        "RENEWAL_EXTENSION with a summary (no data) is checked against its summary's app and stored",
        arguments: LedgerKind.allCases)
    func renewalExtensionSummary(ledger: LedgerKind) throws {
        let fixture = try Fixture(ledger)
        let summary = RenewalExtensionSummary(
            requestIdentifier: "extend-2024-06", productID: Fixture.monthly, storefrontCountryCodes: ["USA", "FRA"],
            succeededCount: 41, failedCount: 1)
        let reply = try fixture.deliver(Fixture.body("RENEWAL_EXTENSION", subtype: "SUMMARY", summary: summary))
        #expect(reply.status == 200)
        #expect(try reply.json()["effects"] == .array([]))
        #expect(try reply.json()["customer_id"] == .null)
        #expect(try fixture.notifications().map { $0["subtype"] } == [.string("SUMMARY")])
        let foreign = try fixture.deliver(
            Fixture.body("RENEWAL_EXTENSION", subtype: "SUMMARY", summary: summary, bundleID: "com.other.app"))
        #expect(foreign.status == 403)
        #expect(foreign.errorCode == "wrong_bundle_id")
    }
}
