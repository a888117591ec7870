import ReceiptModel
import StrictJSON

/// The payload of a signed transaction (Apple's `JWSTransactionDecodedPayload`): the documented fields typed, every
/// other member kept. Apple documents every field as optional; so is every property here.
public struct SignedTransaction: Hashable, Sendable {
    /// `transactionId`.
    public var transactionID: String?
    /// `originalTransactionId`.
    public var originalTransactionID: String?
    /// `webOrderLineItemId`: identifies subscription purchase events across devices.
    public var webOrderLineItemID: String?
    /// `bundleId`.
    public var bundleID: String?
    /// `productId`.
    public var productID: String?
    /// `subscriptionGroupIdentifier`.
    public var subscriptionGroupIdentifier: String?
    /// `purchaseDate`.
    public var purchaseDate: ReceiptDate?
    /// `originalPurchaseDate`.
    public var originalPurchaseDate: ReceiptDate?
    /// `expiresDate`: when an auto-renewable subscription expires or renews.
    public var expiresDate: ReceiptDate?
    /// `quantity`.
    public var quantity: Int64?
    /// `type`: `Auto-Renewable Subscription`, `Non-Consumable`, `Consumable`, `Non-Renewing Subscription`.
    public var type: String?
    /// `appAccountToken`: the UUID the app attached to the purchase.
    public var appAccountToken: String?
    /// `inAppOwnershipType`: `PURCHASED` or `FAMILY_SHARED`.
    public var inAppOwnershipType: String?
    /// `signedDate`.
    public var signedDate: ReceiptDate?
    /// `revocationReason`: 0 (other) or 1 (an issue in the app).
    public var revocationReason: Int64?
    /// `revocationDate`: when Apple refunded or revoked the transaction.
    public var revocationDate: ReceiptDate?
    /// `isUpgraded`.
    public var isUpgraded: Bool?
    /// `offerType`: 1 introductory, 2 promotional, 3 offer code, 4 win-back.
    public var offerType: Int64?
    /// `offerIdentifier`.
    public var offerIdentifier: String?
    /// `environment`: `Production`, `Sandbox`, `Xcode`, `LocalTesting`.
    public var environment: String?
    /// `storefront`: ISO 3166-1 alpha-3 country code.
    public var storefront: String?
    /// `storefrontId`.
    public var storefrontID: String?
    /// `transactionReason`: `PURCHASE` or `RENEWAL`.
    public var transactionReason: String?
    /// `price`, in milliunits of `currency`.
    public var price: Int64?
    /// `currency`: ISO 4217 code.
    public var currency: String?
    /// `offerDiscountType`: `FREE_TRIAL`, `PAY_AS_YOU_GO`, `PAY_UP_FRONT`.
    public var offerDiscountType: String?
    /// `appTransactionId`.
    public var appTransactionID: String?
    /// `offerPeriod`: an ISO 8601 duration.
    public var offerPeriod: String?
    /// The whole payload as signed, documented fields included, in payload order.
    public var json: JSONObject
    /// The members this type does not type (Apple adds fields), in payload order.
    public var unknownFields: JSONObject

    /// The JSON keys this type reads.
    public static let knownKeys: Set<String> = [
        "transactionId", "originalTransactionId", "webOrderLineItemId", "bundleId", "productId",
        "subscriptionGroupIdentifier", "purchaseDate", "originalPurchaseDate", "expiresDate", "quantity", "type",
        "appAccountToken", "inAppOwnershipType", "signedDate", "revocationReason", "revocationDate", "isUpgraded",
        "offerType", "offerIdentifier", "environment", "storefront", "storefrontId", "transactionReason", "price",
        "currency", "offerDiscountType", "appTransactionId", "offerPeriod",
    ]

    /// Reads a payload; `path` names it in error messages.
    public init(json: JSONObject, path: String = "payload") throws(JWSError) {
        let fields = PayloadFields(json, path: path)
        transactionID = try fields.string("transactionId")
        originalTransactionID = try fields.string("originalTransactionId")
        webOrderLineItemID = try fields.string("webOrderLineItemId")
        bundleID = try fields.string("bundleId")
        productID = try fields.string("productId")
        subscriptionGroupIdentifier = try fields.string("subscriptionGroupIdentifier")
        purchaseDate = try fields.date("purchaseDate")
        originalPurchaseDate = try fields.date("originalPurchaseDate")
        expiresDate = try fields.date("expiresDate")
        quantity = try fields.integer("quantity")
        type = try fields.string("type")
        appAccountToken = try fields.string("appAccountToken")
        inAppOwnershipType = try fields.string("inAppOwnershipType")
        signedDate = try fields.date("signedDate")
        revocationReason = try fields.integer("revocationReason")
        revocationDate = try fields.date("revocationDate")
        isUpgraded = try fields.bool("isUpgraded")
        offerType = try fields.integer("offerType")
        offerIdentifier = try fields.string("offerIdentifier")
        environment = try fields.string("environment")
        storefront = try fields.string("storefront")
        storefrontID = try fields.string("storefrontId")
        transactionReason = try fields.string("transactionReason")
        price = try fields.integer("price")
        currency = try fields.string("currency")
        offerDiscountType = try fields.string("offerDiscountType")
        appTransactionID = try fields.string("appTransactionId")
        offerPeriod = try fields.string("offerPeriod")
        self.json = json
        unknownFields = fields.unknownMembers(known: Self.knownKeys)
    }

    /// Applies the caller's bundle id and environment checks.
    func check(_ expectations: JWSExpectations, path: String = "payload") throws(JWSError) {
        try expectations.checkBundleID(bundleID, field: "\(path).bundleId")
        try expectations.checkEnvironment(environment, field: "\(path).environment")
    }
}

extension SignedTransaction {
    /// This transaction as a receipt's in-app purchase, for rules written against receipts (entitlements) and for
    /// the ledger: `revocationDate` becomes the cancellation date, and the offer the fields receipts carry for it,
    /// as ``payload(for:bundleID:environment:signedDate:appAccountToken:revocationReason:otherwiseType:)`` writes
    /// them: a promotional offer (`offerType` 2) its `offerIdentifier` as `promotional_offer_id`, an introductory
    /// one (1) `is_trial_period` for a `FREE_TRIAL` and `is_in_intro_offer_period` for a price. Offer codes and
    /// win-back offers set none of these. Throws when a field every purchase has is missing.
    public func inAppPurchase() throws(JWSError) -> InAppPurchase {
        guard let transactionID, let productID, let purchaseDate else {
            throw JWSError(
                .invalidPayload, "a transaction needs transactionId, productId and purchaseDate to count as a purchase")
        }
        var lineItem: Int64?
        if let text = webOrderLineItemID {
            guard let value = Int64(text) else {
                throw JWSError(.invalidPayload, "payload.webOrderLineItemId \"\(text)\" is not a 64-bit integer")
            }
            lineItem = value
        }
        let introductory = offerType == 1
        return InAppPurchase(
            productID: productID, transactionID: transactionID, purchaseDate: purchaseDate, quantity: quantity ?? 1,
            originalTransactionID: originalTransactionID, originalPurchaseDate: originalPurchaseDate,
            expiresDate: expiresDate, webOrderLineItemID: lineItem, cancellationDate: revocationDate,
            isTrialPeriod: introductory && offerDiscountType == "FREE_TRIAL" ? true : nil,
            isInIntroOfferPeriod: introductory && offerDiscountType != "FREE_TRIAL" ? true : nil,
            promotionalOfferID: offerType == 2 ? offerIdentifier : nil)
    }
}
