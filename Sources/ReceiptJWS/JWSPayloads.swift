import ReceiptModel
import StrictJSON

/// The `type` of a signed transaction.
public enum ProductType: String, Hashable, Sendable, CaseIterable {
    case autoRenewableSubscription = "Auto-Renewable Subscription"
    case nonConsumable = "Non-Consumable"
    case consumable = "Consumable"
    case nonRenewingSubscription = "Non-Renewing Subscription"
}

extension SignedTransaction {
    /// A `JWSTransactionDecodedPayload` for one purchase of our model, ready for ``JWSSigner/sign(payload:)``:
    ///
    /// - `transactionId`, `originalTransactionId` (the transaction's own id when the purchase has none),
    ///   `webOrderLineItemId` (as text), `bundleId`, `productId`, `quantity` (1 when absent);
    /// - `purchaseDate`, `originalPurchaseDate` (the purchase date when absent), `expiresDate`, `signedDate` and
    ///   `revocationDate` (from the cancellation date) as milliseconds since 1970;
    /// - `type`: `Auto-Renewable Subscription` when the purchase has an expiry date, otherwise `otherwiseType`;
    /// - `inAppOwnershipType` `PURCHASED`; `transactionReason` `RENEWAL` for a subscription transaction that is not
    ///   its original one, otherwise `PURCHASE`;
    /// - `offerType` 1 (introductory, `offerDiscountType` `FREE_TRIAL` for a trial) or 2 (promotional, with
    ///   `offerIdentifier`) from the trial, intro-offer and promotional-offer fields;
    /// - `environment`;
    /// - `appAccountToken` and `revocationReason` when given.
    ///
    /// Callers add what the model does not hold (`storefront`, `price`, `subscriptionGroupIdentifier`…) to the result.
    public static func payload(
        for purchase: InAppPurchase,
        bundleID: String,
        environment: AppStoreEnvironment,
        signedDate: ReceiptDate,
        appAccountToken: String? = nil,
        revocationReason: Int64? = nil,
        otherwiseType: ProductType = .nonConsumable
    ) -> JSONObject {
        var json = JSONObject()
        json["transactionId"] = .string(purchase.transactionID)
        json["originalTransactionId"] = .string(purchase.originalTransactionID ?? purchase.transactionID)
        if let lineItem = purchase.webOrderLineItemID { json["webOrderLineItemId"] = .string(String(lineItem)) }
        json["bundleId"] = .string(bundleID)
        json["productId"] = .string(purchase.productID)
        json["purchaseDate"] = .integer(purchase.purchaseDate.millisecondsSince1970)
        json["originalPurchaseDate"] = .integer(
            (purchase.originalPurchaseDate ?? purchase.purchaseDate).millisecondsSince1970)
        if let expires = purchase.expiresDate { json["expiresDate"] = .integer(expires.millisecondsSince1970) }
        json["quantity"] = .integer(purchase.quantity ?? 1)
        let isSubscription = purchase.expiresDate != nil
        json["type"] = .string(isSubscription ? ProductType.autoRenewableSubscription.rawValue : otherwiseType.rawValue)
        if let appAccountToken { json["appAccountToken"] = .string(appAccountToken) }
        json["inAppOwnershipType"] = .string("PURCHASED")
        json["signedDate"] = .integer(signedDate.millisecondsSince1970)
        if let revocationReason { json["revocationReason"] = .integer(revocationReason) }
        if let revoked = purchase.cancellationDate { json["revocationDate"] = .integer(revoked.millisecondsSince1970) }
        if let offer = purchase.promotionalOfferID {
            json["offerType"] = .integer(2)
            json["offerIdentifier"] = .string(offer)
        } else if purchase.isTrialPeriod == true {
            json["offerType"] = .integer(1)
            json["offerDiscountType"] = .string("FREE_TRIAL")
        } else if purchase.isInIntroOfferPeriod == true {
            json["offerType"] = .integer(1)
        }
        json["environment"] = .string(environment.rawValue)
        let isRenewal =
            isSubscription && (purchase.originalTransactionID ?? purchase.transactionID) != purchase.transactionID
        json["transactionReason"] = .string(isRenewal ? "RENEWAL" : "PURCHASE")
        return json
    }
}

/// The members of a `JWSRenewalInfoDecodedPayload` that its signer states, for
/// ``SignedRenewalInfo/payload(_:environment:signedDate:)``; absent ones are left out of the payload.
public struct RenewalInfoFields: Hashable, Sendable {
    /// `originalTransactionId`.
    public var originalTransactionID: String
    /// `productId`.
    public var productID: String
    /// `autoRenewProductId`: the product that renews at the next billing period.
    public var autoRenewProductID: String?
    /// `autoRenewStatus`: 0 off, 1 on.
    public var autoRenewStatus: Int64?
    /// `expirationIntent`: 1 cancelled, 2 billing error, 3 declined a price increase, 4 product unavailable, 5 other.
    public var expirationIntent: Int64?
    /// `isInBillingRetryPeriod`.
    public var isInBillingRetryPeriod: Bool?
    /// `gracePeriodExpiresDate`.
    public var gracePeriodExpiresDate: ReceiptDate?
    /// `priceIncreaseStatus`: 0 not yet responded, 1 consented or not needed.
    public var priceIncreaseStatus: Int64?
    /// `recentSubscriptionStartDate`.
    public var recentSubscriptionStartDate: ReceiptDate?
    /// `renewalDate`: when the most recent purchase expires.
    public var renewalDate: ReceiptDate?

    /// Renewal info for `productID`'s subscription `originalTransactionID`; set the other members as needed.
    public init(originalTransactionID: String, productID: String) {
        self.originalTransactionID = originalTransactionID
        self.productID = productID
    }
}

extension SignedRenewalInfo {
    /// A `JWSRenewalInfoDecodedPayload` for the auto-renewable subscription `purchase` (which must have an expiry
    /// date): `originalTransactionId`, `productId` and `autoRenewProductId`, `autoRenewStatus`,
    /// `recentSubscriptionStartDate` (the original purchase date, else the purchase date), `renewalDate` (the
    /// expiry date), `signedDate` and `environment`.
    ///
    /// - Throws: ``JWSError/Code/invalidPayload`` when the purchase has no expiry date.
    public static func payload(
        for purchase: InAppPurchase,
        environment: AppStoreEnvironment,
        signedDate: ReceiptDate,
        autoRenews: Bool = true
    ) throws(JWSError) -> JSONObject {
        guard let expires = purchase.expiresDate else {
            throw JWSError(
                .invalidPayload,
                "renewal info describes an auto-renewable subscription; purchase \(purchase.transactionID) has no "
                    + "expiry date")
        }
        var fields = RenewalInfoFields(
            originalTransactionID: purchase.originalTransactionID ?? purchase.transactionID,
            productID: purchase.productID)
        fields.autoRenewProductID = purchase.productID
        fields.autoRenewStatus = autoRenews ? 1 : 0
        fields.recentSubscriptionStartDate = purchase.originalPurchaseDate ?? purchase.purchaseDate
        fields.renewalDate = expires
        return payload(fields, environment: environment, signedDate: signedDate)
    }

    /// A `JWSRenewalInfoDecodedPayload` of `fields` (dates as milliseconds since 1970), with `signedDate` and
    /// `environment`.
    public static func payload(
        _ fields: RenewalInfoFields, environment: AppStoreEnvironment, signedDate: ReceiptDate
    ) -> JSONObject {
        var json = JSONObject()
        json["originalTransactionId"] = .string(fields.originalTransactionID)
        if let product = fields.autoRenewProductID { json["autoRenewProductId"] = .string(product) }
        json["productId"] = .string(fields.productID)
        if let status = fields.autoRenewStatus { json["autoRenewStatus"] = .integer(status) }
        if let intent = fields.expirationIntent { json["expirationIntent"] = .integer(intent) }
        if let retrying = fields.isInBillingRetryPeriod { json["isInBillingRetryPeriod"] = .bool(retrying) }
        if let grace = fields.gracePeriodExpiresDate {
            json["gracePeriodExpiresDate"] = .integer(grace.millisecondsSince1970)
        }
        if let status = fields.priceIncreaseStatus { json["priceIncreaseStatus"] = .integer(status) }
        json["signedDate"] = .integer(signedDate.millisecondsSince1970)
        json["environment"] = .string(environment.rawValue)
        if let start = fields.recentSubscriptionStartDate {
            json["recentSubscriptionStartDate"] = .integer(start.millisecondsSince1970)
        }
        if let renewal = fields.renewalDate { json["renewalDate"] = .integer(renewal.millisecondsSince1970) }
        return json
    }
}

/// The outcome of a request to extend the renewal date of every subscriber of a product, as the `summary` of a
/// `RENEWAL_EXTENSION` notification reports it.
public struct RenewalExtensionSummary: Hashable, Sendable {
    /// `requestIdentifier`: the id the developer gave the extension request.
    public var requestIdentifier: String
    /// `productId`: the subscription extended.
    public var productID: String
    /// `storefrontCountryCodes`: the storefronts extended (all when empty).
    public var storefrontCountryCodes: [String]
    /// `succeededCount`: subscriptions extended.
    public var succeededCount: Int64
    /// `failedCount`: subscriptions that could not be extended.
    public var failedCount: Int64

    public init(
        requestIdentifier: String, productID: String, storefrontCountryCodes: [String] = [], succeededCount: Int64 = 0,
        failedCount: Int64 = 0
    ) {
        self.requestIdentifier = requestIdentifier
        self.productID = productID
        self.storefrontCountryCodes = storefrontCountryCodes
        self.succeededCount = succeededCount
        self.failedCount = failedCount
    }
}

/// What an App Store Server Notification V2 states, for ``VerifiedNotification/payload(_:signedTransactionInfo:signedRenewalInfo:)``
/// and ``JWSSigner/signNotification(_:)``; optional members left nil are left out of the payload.
public struct NotificationContent: Hashable, Sendable {
    /// `notificationType`: `SUBSCRIBED`, `DID_RENEW`, `TEST`…
    public var notificationType: String
    /// `subtype`: `INITIAL_BUY`, `BILLING_RECOVERY`…
    public var subtype: String?
    /// `notificationUUID`.
    public var notificationUUID: String
    /// `signedDate`.
    public var signedDate: ReceiptDate
    /// `data.appAppleId`.
    public var appAppleID: Int64?
    /// `data.bundleId`.
    public var bundleID: String
    /// `data.bundleVersion`.
    public var bundleVersion: String?
    /// `data.environment`.
    public var environment: AppStoreEnvironment
    /// `data.status`: 1 active, 2 expired, 3 billing retry, 4 grace period, 5 revoked.
    public var status: Int64?
    /// The `JWSTransactionDecodedPayload` signed into `data.signedTransactionInfo` (see
    /// ``SignedTransaction/payload(for:bundleID:environment:signedDate:appAccountToken:revocationReason:otherwiseType:)``).
    public var transaction: JSONObject?
    /// The `JWSRenewalInfoDecodedPayload` signed into `data.signedRenewalInfo` (see
    /// ``SignedRenewalInfo/payload(_:environment:signedDate:)``).
    public var renewalInfo: JSONObject?
    /// When set, the payload has this `summary` (a `RENEWAL_EXTENSION` with subtype `SUMMARY`) in place of `data`:
    /// the transaction, renewal info, `bundleVersion` and `status` are then left out.
    public var summary: RenewalExtensionSummary?

    /// A notification about `bundleID`; without `notificationUUID`, a random lower-case UUID version 4.
    public init(
        notificationType: String,
        notificationUUID: String? = nil,
        signedDate: ReceiptDate,
        bundleID: String,
        environment: AppStoreEnvironment = .production
    ) {
        self.notificationType = notificationType
        self.notificationUUID = notificationUUID ?? Self.randomUUID()
        self.signedDate = signedDate
        self.bundleID = bundleID
        self.environment = environment
    }

    /// A random UUID version 4 (RFC 9562) in lower case, from the system's secure generator.
    public static func randomUUID() -> String {
        var generator = SystemRandomNumberGenerator()
        var bytes = (0..<16).map { _ in UInt8.random(in: .min ... .max, using: &generator) }
        bytes[6] = bytes[6] & 0x0F | 0x40
        bytes[8] = bytes[8] & 0x3F | 0x80
        return DeviceIdentifier(bytes: bytes).description.lowercased()
    }
}

extension VerifiedNotification {
    /// A `responseBodyV2DecodedPayload` for `content`: `notificationType`, `subtype` when given, `notificationUUID`,
    /// `data` (`appAppleId` and `bundleVersion` when given, `bundleId`, `environment`, the given signed transaction
    /// and renewal info, `status` when given) or, when `content` has a summary, `summary` (`requestIdentifier`,
    /// `environment`, `appAppleId` when given, `bundleId`, `productId`, `storefrontCountryCodes`, `failedCount`,
    /// `succeededCount`), then `version` `2.0` and `signedDate` in milliseconds since 1970. `content`'s transaction
    /// and renewal info payloads are not read: their JWS are the arguments.
    public static func payload(
        _ content: NotificationContent, signedTransactionInfo: String?, signedRenewalInfo: String?
    ) -> JSONObject {
        var json = JSONObject()
        json["notificationType"] = .string(content.notificationType)
        if let subtype = content.subtype { json["subtype"] = .string(subtype) }
        json["notificationUUID"] = .string(content.notificationUUID)
        if let summary = content.summary {
            json["summary"] = .object(Self.summary(summary, of: content))
        } else {
            json["data"] = .object(Self.data(of: content, signedTransactionInfo, signedRenewalInfo))
        }
        json["version"] = .string("2.0")
        json["signedDate"] = .integer(content.signedDate.millisecondsSince1970)
        return json
    }

    private static func summary(_ summary: RenewalExtensionSummary, of content: NotificationContent) -> JSONObject {
        var json = JSONObject()
        json["requestIdentifier"] = .string(summary.requestIdentifier)
        json["environment"] = .string(content.environment.rawValue)
        if let appAppleID = content.appAppleID { json["appAppleId"] = .integer(appAppleID) }
        json["bundleId"] = .string(content.bundleID)
        json["productId"] = .string(summary.productID)
        json["storefrontCountryCodes"] = .array(summary.storefrontCountryCodes.map(JSONValue.string))
        json["failedCount"] = .integer(summary.failedCount)
        json["succeededCount"] = .integer(summary.succeededCount)
        return json
    }

    private static func data(
        of content: NotificationContent, _ signedTransactionInfo: String?, _ signedRenewalInfo: String?
    ) -> JSONObject {
        var data = JSONObject()
        if let appAppleID = content.appAppleID { data["appAppleId"] = .integer(appAppleID) }
        data["bundleId"] = .string(content.bundleID)
        if let version = content.bundleVersion { data["bundleVersion"] = .string(version) }
        data["environment"] = .string(content.environment.rawValue)
        if let signedTransactionInfo { data["signedTransactionInfo"] = .string(signedTransactionInfo) }
        if let signedRenewalInfo { data["signedRenewalInfo"] = .string(signedRenewalInfo) }
        if let status = content.status { data["status"] = .integer(status) }
        return data
    }
}

extension JWSSigner {
    /// The body App Store Server Notifications V2 POSTs for `content`, `{"signedPayload": "<JWS>"}`: its transaction
    /// and renewal info signed first (none with a summary), then
    /// ``VerifiedNotification/payload(_:signedTransactionInfo:signedRenewalInfo:)`` around them, all by this signer.
    public func signNotification(_ content: NotificationContent) throws(JWSError) -> JSONObject {
        guard content.summary == nil else {
            let payload = VerifiedNotification.payload(content, signedTransactionInfo: nil, signedRenewalInfo: nil)
            return JSONObject(["signedPayload": .string(try sign(payload: payload))])
        }
        let transaction = try content.transaction.map { payload throws(JWSError) in try sign(payload: payload) }
        let renewal = try content.renewalInfo.map { payload throws(JWSError) in try sign(payload: payload) }
        let payload = VerifiedNotification.payload(
            content, signedTransactionInfo: transaction, signedRenewalInfo: renewal)
        return JSONObject(["signedPayload": .string(try sign(payload: payload))])
    }
}
