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
    /// - `environment`.
    ///
    /// Callers add what the model does not hold (`storefront`, `price`, `subscriptionGroupIdentifier`…) to the result.
    public static func payload(
        for purchase: InAppPurchase,
        bundleID: String,
        environment: AppStoreEnvironment,
        signedDate: ReceiptDate,
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
        json["inAppOwnershipType"] = .string("PURCHASED")
        json["signedDate"] = .integer(signedDate.millisecondsSince1970)
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
        var json = JSONObject()
        json["originalTransactionId"] = .string(purchase.originalTransactionID ?? purchase.transactionID)
        json["autoRenewProductId"] = .string(purchase.productID)
        json["productId"] = .string(purchase.productID)
        json["autoRenewStatus"] = .integer(autoRenews ? 1 : 0)
        json["signedDate"] = .integer(signedDate.millisecondsSince1970)
        json["environment"] = .string(environment.rawValue)
        json["recentSubscriptionStartDate"] = .integer(
            (purchase.originalPurchaseDate ?? purchase.purchaseDate).millisecondsSince1970)
        json["renewalDate"] = .integer(expires.millisecondsSince1970)
        return json
    }
}
