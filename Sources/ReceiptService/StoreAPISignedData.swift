import Entitlements
import ReceiptJWS
import ReceiptLedger
import ReceiptModel
import StrictJSON

/// The signed data of Apple's server API for one app's transactions in the ledger, as the store's own endpoints
/// and outgoing notifications carry it: `JWSTransactionDecodedPayload` and `JWSRenewalInfoDecodedPayload` with
/// Apple's fields, signed ES256 with the service's key, at one `signedDate`.
struct StoreAPISignedData {
    let api: ServiceConfiguration.StoreAPI
    let app: ServiceConfiguration.StoreAPI.App
    let environment: AppStoreEnvironment
    let signedDate: ReceiptDate

    init(
        api: ServiceConfiguration.StoreAPI, app: ServiceConfiguration.StoreAPI.App,
        environment: ServiceConfiguration.Environment, signedDate: ReceiptDate
    ) {
        self.api = api
        self.app = app
        self.environment =
            switch environment {
            case .production: .production
            case .sandbox: .sandbox
            }
        self.signedDate = signedDate
    }

    /// Apple's `type` of `productID` by the app's catalog; nil for a product the catalog does not list.
    func productType(_ productID: String) -> ProductType? {
        switch app.catalog.product(productID)?.type {
        case .autoRenewable: .autoRenewableSubscription
        case .nonRenewing: .nonRenewingSubscription
        case .consumable: .consumable
        case .nonConsumable: .nonConsumable
        case nil: nil
        }
    }

    /// Apple's `subscriptionGroupIdentifier` of an auto-renewable `productID`, else nil.
    func subscriptionGroup(_ productID: String) -> String? {
        guard let product = app.catalog.product(productID), product.type == .autoRenewable else { return nil }
        return product.appleGroupIdentifier
    }

    /// The transaction's `JWSTransactionDecodedPayload`: the fields of
    /// ``SignedTransaction/payload(for:bundleID:environment:signedDate:appAccountToken:revocationReason:otherwiseType:)``
    /// with the catalog's `type` (a product it does not list is a subscription when it expires, else
    /// non-consumable), `subscriptionGroupIdentifier` for subscriptions, `revocationReason` 0 ("other") after a
    /// refund, and the app's storefront when configured.
    func transactionPayload(_ transaction: LedgerTransaction) -> JSONObject {
        let purchase = transaction.purchase
        var payload = SignedTransaction.payload(
            for: purchase, bundleID: transaction.bundleID, environment: environment, signedDate: signedDate,
            appAccountToken: transaction.appAccountToken,
            revocationReason: purchase.cancellationDate == nil ? nil : 0)
        if let type = productType(purchase.productID) { payload["type"] = .string(type.rawValue) }
        if let group = subscriptionGroup(purchase.productID) {
            payload["subscriptionGroupIdentifier"] = .string(group)
        }
        if let storefront = app.storefront { payload["storefront"] = .string(storefront) }
        if let storefrontID = app.storefrontID { payload["storefrontId"] = .string(storefrontID) }
        return payload
    }

    /// The subscription's status at `signedDate`, as Apple numbers it: 5 revoked (its latest transaction was
    /// refunded), 1 active (not expired), 4 in grace (billing retry within the grace period the stored renewal info
    /// states), 3 in billing retry, else 2 expired.
    func status(latest: LedgerTransaction, renewal: LedgerRenewalInfo?) -> Int64 {
        if latest.purchase.cancellationDate != nil { return 5 }
        if let expires = latest.purchase.expiresDate, signedDate < expires { return 1 }
        guard renewal?.isInBillingRetryPeriod == true else { return 2 }
        if let grace = renewal?.gracePeriodExpiresDate, signedDate < grace { return 4 }
        return 3
    }

    /// The renewal info of the subscription whose latest transaction is `latest`: what the ledger holds of it
    /// (kept from Apple's notifications) when it does, otherwise that of a subscription that renews while it is
    /// active and does not once it has lapsed or was refunded.
    func renewalPayload(latest: LedgerTransaction, renewal: LedgerRenewalInfo?) -> JSONObject {
        let purchase = latest.purchase
        var fields = RenewalInfoFields(
            originalTransactionID: purchase.originalTransactionID ?? purchase.transactionID,
            productID: purchase.productID)
        fields.autoRenewProductID = renewal?.autoRenewProductID ?? purchase.productID
        fields.autoRenewStatus = (renewal?.autoRenews ?? (status(latest: latest, renewal: renewal) == 1)) ? 1 : 0
        fields.expirationIntent = renewal?.expirationIntent
        fields.isInBillingRetryPeriod = renewal?.isInBillingRetryPeriod
        fields.gracePeriodExpiresDate = renewal?.gracePeriodExpiresDate
        fields.priceIncreaseStatus = renewal?.priceIncreaseStatus
        fields.recentSubscriptionStartDate = purchase.originalPurchaseDate ?? purchase.purchaseDate
        fields.renewalDate = purchase.expiresDate
        return SignedRenewalInfo.payload(fields, environment: environment, signedDate: signedDate)
    }

    /// `payload` signed with the service's key.
    func sign(_ payload: JSONObject) throws(ServiceError) -> String {
        do {
            return try api.signer.sign(payload: payload)
        } catch {
            throw ServiceError.apple(500, 5_000_000, "An unknown error occurred: signing failed: \(error.message)")
        }
    }
}
