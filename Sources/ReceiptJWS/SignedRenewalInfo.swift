import ReceiptModel
import StrictJSON

/// The payload of signed renewal info (Apple's `JWSRenewalInfoDecodedPayload`) for an auto-renewable subscription:
/// the documented fields typed (all optional, as Apple documents them), every other member kept.
public struct SignedRenewalInfo: Hashable, Sendable {
    /// `expirationIntent`: 1 cancelled, 2 billing error, 3 declined a price increase, 4 product unavailable, 5 other.
    public var expirationIntent: Int64?
    /// `originalTransactionId`.
    public var originalTransactionID: String?
    /// `autoRenewProductId`: the product that renews at the next billing period.
    public var autoRenewProductID: String?
    /// `productId`.
    public var productID: String?
    /// `autoRenewStatus`: 0 off, 1 on.
    public var autoRenewStatus: Int64?
    /// `isInBillingRetryPeriod`.
    public var isInBillingRetryPeriod: Bool?
    /// `priceIncreaseStatus`: 0 not yet responded, 1 consented or not needed.
    public var priceIncreaseStatus: Int64?
    /// `gracePeriodExpiresDate`.
    public var gracePeriodExpiresDate: ReceiptDate?
    /// `offerType`.
    public var offerType: Int64?
    /// `offerIdentifier`.
    public var offerIdentifier: String?
    /// `signedDate`.
    public var signedDate: ReceiptDate?
    /// `environment`.
    public var environment: String?
    /// `recentSubscriptionStartDate`.
    public var recentSubscriptionStartDate: ReceiptDate?
    /// `renewalDate`: when the most recent purchase expires.
    public var renewalDate: ReceiptDate?
    /// `currency` of `renewalPrice`.
    public var currency: String?
    /// `renewalPrice`, in milliunits.
    public var renewalPrice: Int64?
    /// `offerDiscountType`.
    public var offerDiscountType: String?
    /// `eligibleWinBackOfferIds`.
    public var eligibleWinBackOfferIDs: [String]?
    /// `appAccountToken`.
    public var appAccountToken: String?
    /// `appTransactionId`.
    public var appTransactionID: String?
    /// `offerPeriod`.
    public var offerPeriod: String?
    /// The whole payload as signed, in payload order.
    public var json: JSONObject
    /// The members this type does not type, in payload order.
    public var unknownFields: JSONObject

    /// The JSON keys this type reads.
    public static let knownKeys: Set<String> = [
        "expirationIntent", "originalTransactionId", "autoRenewProductId", "productId", "autoRenewStatus",
        "isInBillingRetryPeriod", "priceIncreaseStatus", "gracePeriodExpiresDate", "offerType", "offerIdentifier",
        "signedDate", "environment", "recentSubscriptionStartDate", "renewalDate", "currency", "renewalPrice",
        "offerDiscountType", "eligibleWinBackOfferIds", "appAccountToken", "appTransactionId", "offerPeriod",
    ]

    /// Reads a payload; `path` names it in error messages.
    public init(json: JSONObject, path: String = "payload") throws(JWSError) {
        let fields = PayloadFields(json, path: path)
        expirationIntent = try fields.integer("expirationIntent")
        originalTransactionID = try fields.string("originalTransactionId")
        autoRenewProductID = try fields.string("autoRenewProductId")
        productID = try fields.string("productId")
        autoRenewStatus = try fields.integer("autoRenewStatus")
        isInBillingRetryPeriod = try fields.bool("isInBillingRetryPeriod")
        priceIncreaseStatus = try fields.integer("priceIncreaseStatus")
        gracePeriodExpiresDate = try fields.date("gracePeriodExpiresDate")
        offerType = try fields.integer("offerType")
        offerIdentifier = try fields.string("offerIdentifier")
        signedDate = try fields.date("signedDate")
        environment = try fields.string("environment")
        recentSubscriptionStartDate = try fields.date("recentSubscriptionStartDate")
        renewalDate = try fields.date("renewalDate")
        currency = try fields.string("currency")
        renewalPrice = try fields.integer("renewalPrice")
        offerDiscountType = try fields.string("offerDiscountType")
        eligibleWinBackOfferIDs = try fields.strings("eligibleWinBackOfferIds")
        appAccountToken = try fields.string("appAccountToken")
        appTransactionID = try fields.string("appTransactionId")
        offerPeriod = try fields.string("offerPeriod")
        self.json = json
        unknownFields = fields.unknownMembers(known: Self.knownKeys)
    }

    /// Applies the caller's environment check (renewal info carries no bundle id or app Apple id).
    func check(_ expectations: JWSExpectations, path: String = "payload") throws(JWSError) {
        try expectations.checkEnvironment(environment, field: "\(path).environment")
    }
}
