import ReceiptJWS
import ReceiptLedger
import ReceiptModel
import StrictJSON

/// The Server Notifications V2 the store sends about what it records through its own endpoints, for apps of
/// `store_api` with `notification_urls`, queued in the same commit as the change they announce:
///
/// | recorded | notification |
/// |---|---|
/// | a purchase of a consumable, non-consumable or non-renewing subscription | `ONE_TIME_CHARGE` |
/// | the first transaction of a subscription, the customer's first in its group | `SUBSCRIBED` `INITIAL_BUY` |
/// | the first transaction of a subscription, after another in its group | `SUBSCRIBED` `RESUBSCRIBE` |
/// | a later transaction of a subscription (a renewal) | `DID_RENEW` |
/// | a refund | `REFUND` |
///
/// Each carries `data.signedTransactionInfo` (the transaction as stored after the change) and, for subscriptions,
/// `data.signedRenewalInfo` and `data.status`; one `notificationUUID` for all the app's URLs.
extension ReceiptService {
    /// What recording `transaction` announces, or nothing when its app sends no notifications or the ledger holds
    /// the transaction already.
    func outgoingNotifications(recording transaction: LedgerTransaction) throws(ServiceError)
        -> [LedgerOutgoingNotification]
    {
        guard let signing = try notificationSigning(for: transaction.bundleID) else { return [] }
        let purchase = transaction.purchase
        // A transaction already recorded announces nothing (its repeat is answered, or refused as a conflict, by
        // the ledger alone), so nothing is signed for it; one recorded meanwhile by another request is caught by
        // the commit, which queues nothing after a record that stored nothing new.
        let recorded = try ledgerOperation { () throws(LedgerError) in
            try ledger.transaction(id: purchase.transactionID)
        }
        guard recorded == nil else { return [] }
        let original = purchase.originalTransactionID ?? purchase.transactionID
        guard let group = signing.subscriptionGroup(purchase.productID) else {
            return try notifications(signing, type: "ONE_TIME_CHARGE", subtype: nil, transaction: transaction)
        }
        guard original == purchase.transactionID else {
            return try notifications(signing, type: "DID_RENEW", subtype: nil, transaction: transaction)
        }
        let earlier = try ledgerOperation { () throws(LedgerError) in
            try ledger.transactions(customerID: transaction.customerID, bundleID: transaction.bundleID)
        }
        let resubscribes = earlier.contains {
            $0.purchase.transactionID != purchase.transactionID
                && signing.subscriptionGroup($0.purchase.productID) == group
                && $0.purchase.purchaseDate <= purchase.purchaseDate
        }
        return try notifications(
            signing, type: "SUBSCRIBED", subtype: resubscribes ? "RESUBSCRIBE" : "INITIAL_BUY",
            transaction: transaction)
    }

    /// What refunding the stored `transaction` at `date` announces (`REFUND`), or nothing when its app sends no
    /// notifications.
    func outgoingNotifications(refunding transaction: LedgerTransaction, at date: ReceiptDate) throws(ServiceError)
        -> [LedgerOutgoingNotification]
    {
        guard let signing = try notificationSigning(for: transaction.bundleID) else { return [] }
        var refunded = transaction
        refunded.purchase.cancellationDate = date
        return try notifications(signing, type: "REFUND", subtype: nil, transaction: refunded)
    }

    /// A `TEST` notification for each of the app's URLs, queued under `testToken`; empty when it has none.
    func outgoingTestNotifications(bundleID: String, testToken: String) throws(ServiceError)
        -> [LedgerOutgoingNotification]
    {
        let signing = try storeAPISignedData(bundleID: bundleID)
        var content = NotificationContent(
            notificationType: "TEST", signedDate: signing.signedDate, bundleID: bundleID,
            environment: signing.environment)
        content.appAppleID = signing.app.appAppleID
        let payload = VerifiedNotification.payload(content, signedTransactionInfo: nil, signedRenewalInfo: nil)
        let signed = try signing.sign(payload)
        return signing.app.notificationURLs.map { url in
            LedgerOutgoingNotification(
                notificationUUID: content.notificationUUID, url: url, bundleID: bundleID, notificationType: "TEST",
                testToken: testToken, signedDate: signing.signedDate, signedPayload: signed)
        }
    }

    /// The signed data of `bundleID` when it is a `store_api` app with notification URLs.
    private func notificationSigning(for bundleID: String) throws(ServiceError) -> StoreAPISignedData? {
        guard let app = configuration.storeAPI?.app(bundleID), !app.notificationURLs.isEmpty else { return nil }
        return try storeAPISignedData(bundleID: bundleID)
    }

    /// One signed notification about `transaction`, for each of the app's URLs.
    private func notifications(
        _ signing: StoreAPISignedData, type: String, subtype: String?, transaction: LedgerTransaction
    ) throws(ServiceError) -> [LedgerOutgoingNotification] {
        var content = NotificationContent(
            notificationType: type, signedDate: signing.signedDate, bundleID: transaction.bundleID,
            environment: signing.environment)
        content.subtype = subtype
        content.appAppleID = signing.app.appAppleID
        let signedTransaction = try signing.sign(signing.transactionPayload(transaction))
        var signedRenewal: String?
        if signing.subscriptionGroup(transaction.purchase.productID) != nil, transaction.purchase.expiresDate != nil {
            content.status = signing.status(latest: transaction, renewal: nil)
            signedRenewal = try signing.sign(signing.renewalPayload(latest: transaction, renewal: nil))
        }
        let payload = VerifiedNotification.payload(
            content, signedTransactionInfo: signedTransaction, signedRenewalInfo: signedRenewal)
        let signed = try signing.sign(payload)
        let purchase = transaction.purchase
        return signing.app.notificationURLs.map { url in
            LedgerOutgoingNotification(
                notificationUUID: content.notificationUUID, url: url, bundleID: transaction.bundleID,
                notificationType: type, subtype: subtype, transactionID: purchase.transactionID,
                originalTransactionID: purchase.originalTransactionID ?? purchase.transactionID,
                signedDate: signing.signedDate, signedPayload: signed)
        }
    }
}
