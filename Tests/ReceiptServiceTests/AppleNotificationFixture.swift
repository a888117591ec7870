import Entitlements
import Foundation
import PostgreSQLTestSupport
import ReceiptJWS
import ReceiptModel
import ReceiptService
import StrictJSON
import Testing

/// Where a test's ledger lives: the customer-state tests run on both stores.
enum LedgerKind: String, CaseIterable, CustomTestStringConvertible, Sendable {
    case sqlite
    case postgresql

    var testDescription: String { rawValue }

    /// Points `configuration` at a new ledger of this kind (SQLite: the fixture's default file).
    func apply(to configuration: inout ServiceConfiguration) throws {
        guard self == .postgresql else { return }
        configuration.ledgerPath = try PostgreSQLTestServer.shared().createDatabase()
    }
}

/// A service that accepts App Store Server Notifications signed by the development chain for
/// `com.example.game` (app Apple id 1234567890), with a catalog for it; and notifications to send it.
struct AppleNotificationFixture {
    static let bundleID = "com.example.game"
    static let appAppleID: Int64 = 1_234_567_890
    static let monthly = "com.example.pro.monthly"
    static let catalog = """
        {"bundle_id": "com.example.game", "products": [
          {"id": "com.example.pro.monthly", "type": "auto_renewable", "entitlements": ["pro"], "group": "pro", "rank": 1},
          {"id": "com.example.removeads", "type": "non_consumable", "entitlements": ["no_ads"]}
        ]}
        """

    let service: ServiceFixture

    init(_ ledger: LedgerKind, adjust: (inout ServiceConfiguration) -> Void = { _ in }) throws {
        var failure: Error?
        service = try ServiceFixture { configuration in
            do {
                try ledger.apply(to: &configuration)
                configuration.catalogs = ["game": try Catalog(json: Array(Self.catalog.utf8))]
            } catch {
                failure = error
            }
            configuration.appleNotifications = ServiceConfiguration.AppleNotifications(
                trustAnchors: [ServiceFixture.chain.root], bundleIDs: [Self.bundleID], appAppleIDs: [Self.appAppleID])
            adjust(&configuration)
        }
        if let failure { throw failure }
    }

    /// Milliseconds of a day after 2024-06-01 (at `hour`).
    static func day(_ offset: Int, hour: Int = 0) -> ReceiptDate {
        ReceiptDate(millisecondsSince1970: 1_717_200_000_000 + Int64(offset) * 86_400_000 + Int64(hour) * 3_600_000)
    }

    /// A monthly subscription period `period` (0 is the first) of the original transaction `original`, bought on
    /// day `30 * period`.
    static func period(_ period: Int, original: String = "7000", token: String? = nil) -> Purchase {
        Purchase(
            purchase: InAppPurchase(
                productID: monthly, transactionID: period == 0 ? original : "\(original)-\(period)",
                purchaseDate: day(30 * period), quantity: 1, originalTransactionID: original,
                originalPurchaseDate: day(0), expiresDate: day(30 * period + 30),
                webOrderLineItemID: Int64(period + 1)),
            appAccountToken: token)
    }

    /// A purchase and what the notification's transaction adds to it.
    struct Purchase {
        var purchase: InAppPurchase
        var appAccountToken: String?
        var revoked: ReceiptDate?
    }

    /// A renewal info to nest: the subscription's, signed at `signed`.
    struct Renewal {
        var original = "7000"
        var autoRenews = true
        var billingRetry: Bool?
        var graceEnds: ReceiptDate?
        var expirationIntent: Int64?
        var signed: ReceiptDate
    }

    /// The development chain's JWS signer, with the leaf and the intermediate in x5c as Apple's.
    static func signer() throws -> JWSSigner {
        try JWSSigner(
            key: ServiceFixture.chain.signerKey,
            chain: [ServiceFixture.chain.signer, ServiceFixture.chain.intermediate])
    }

    /// The payload of a StoreKit 2 transaction of `transaction`, signed at `signed`.
    static func transactionPayload(
        _ transaction: Purchase, signed: ReceiptDate, bundleID: String = bundleID,
        environment: AppStoreEnvironment = .production
    ) -> JSONObject {
        var purchase = transaction.purchase
        purchase.cancellationDate = transaction.revoked
        return SignedTransaction.payload(
            for: purchase, bundleID: bundleID, environment: environment, signedDate: signed,
            appAccountToken: transaction.appAccountToken)
    }

    /// A StoreKit 2 signed transaction (`jwsRepresentation`) of `transaction`, signed at `signed`.
    static func signedTransaction(_ transaction: Purchase, signed: ReceiptDate = day(1)) throws -> String {
        try signer().sign(payload: transactionPayload(transaction, signed: signed))
    }

    /// A notification body as Apple POSTs it, built and signed as `receipt sign --format notification` does it,
    /// by the development chain (leaf and intermediate in x5c).
    static func body(
        _ type: String, subtype: String? = nil, uuid: String? = nil, signed: ReceiptDate = day(1),
        transaction: Purchase? = nil, renewal: Renewal? = nil, summary: RenewalExtensionSummary? = nil,
        bundleID: String = bundleID, environment: AppStoreEnvironment = .production, appAppleID: Int64? = appAppleID
    ) throws -> String {
        var content = NotificationContent(
            notificationType: type, notificationUUID: uuid, signedDate: signed, bundleID: bundleID,
            environment: environment)
        content.subtype = subtype
        content.appAppleID = appAppleID
        content.summary = summary
        content.transaction = transaction.map {
            transactionPayload($0, signed: signed, bundleID: bundleID, environment: environment)
        }
        if let renewal {
            var fields = RenewalInfoFields(originalTransactionID: renewal.original, productID: monthly)
            fields.autoRenewProductID = monthly
            fields.autoRenewStatus = renewal.autoRenews ? 1 : 0
            fields.isInBillingRetryPeriod = renewal.billingRetry
            fields.gracePeriodExpiresDate = renewal.graceEnds
            fields.expirationIntent = renewal.expirationIntent
            content.renewalInfo = SignedRenewalInfo.payload(
                fields, environment: environment, signedDate: renewal.signed)
        }
        return JSONValue.object(try signer().signNotification(content)).serialized()
    }

    /// Delivers a notification as Apple does: no token.
    func deliver(_ body: String) throws -> HTTPReply {
        try service.post("/v1/notifications/apple", json: body, token: nil)
    }

    /// The customer's entitlement `name` at `now`: its state, or nil when it has none.
    func state(_ customer: String, _ name: String = "pro", at now: ReceiptDate) throws -> String? {
        let reply = try service.send(
            "GET",
            "/v1/customers/\(customer)/entitlements?bundle_id=\(Self.bundleID)&now=\(now.rfc3339)")
        guard reply.status == 200 else { throw FixtureError("entitlements: \(reply.status) \(reply.text)") }
        guard case .string(let state)? = try reply.json()["entitlements"]?[name]?["state"] else { return nil }
        return state
    }

    /// The app's stored notifications, newest first.
    func notifications() throws -> [JSONValue] {
        let reply = try service.send("GET", "/v1/notifications?bundle_id=\(Self.bundleID)")
        guard reply.status == 200, case .array(let list)? = try reply.json()["notifications"] else {
            throw FixtureError("notifications: \(reply.status) \(reply.text)")
        }
        return list
    }
}
