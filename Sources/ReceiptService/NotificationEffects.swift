import ReceiptJWS
import ReceiptLedger
import ReceiptModel

/// What an App Store Server Notification V2 changes in the ledger, by its `notificationType` (and `subtype`):
///
/// - a new transaction (`SUBSCRIBED`, `DID_RENEW`, `OFFER_REDEEMED`, `ONE_TIME_CHARGE`, `RENEWAL_EXTENDED`,
///   `DID_CHANGE_RENEWAL_PREF` with `UPGRADE`): the transaction is recorded;
/// - `REFUND`, `REVOKE`: the transaction recorded and its cancellation at `revocationDate`; `REFUND_REVERSED`: the
///   cancellation withdrawn;
/// - renewal state (`DID_CHANGE_RENEWAL_STATUS`, `DID_CHANGE_RENEWAL_PREF`, `DID_FAIL_TO_RENEW`,
///   `GRACE_PERIOD_EXPIRED`, `EXPIRED`, `PRICE_INCREASE`, `RENEWAL_EXTENSION`): the transaction it carries is
///   recorded (idempotently), so the ledger knows whose subscription it is;
/// - every one of those keeps the renewal info it carries (the ledger keeps the latest signed);
/// - anything else (`TEST`, `CONSUMPTION_REQUEST`, `REFUND_DECLINED`, types Apple adds later) changes nothing: it
///   is only stored.
///
/// A transaction is recorded as Apple signed it, except that an expiry Apple moved later (`RENEWAL_EXTENDED`, and
/// every notification or signed transaction after it) moves the recorded one; see ``LedgerChange/extend(_:)``.
///
/// Whose transaction it is: its `appAccountToken` (lower-cased) when present; else the customer already recorded
/// for its original transaction; else `apple:` and the original transaction id, a placeholder that a transaction
/// posted later with a customer id adopts.
enum NotificationEffects {
    static let newTransactionTypes: Set<String> = [
        "SUBSCRIBED", "DID_RENEW", "OFFER_REDEEMED", "ONE_TIME_CHARGE", "RENEWAL_EXTENDED",
    ]
    static let refundTypes: Set<String> = ["REFUND", "REVOKE"]
    static let refundReversedType = "REFUND_REVERSED"
    static let renewalStateTypes: Set<String> = [
        "DID_CHANGE_RENEWAL_STATUS", "DID_CHANGE_RENEWAL_PREF", "DID_FAIL_TO_RENEW", "GRACE_PERIOD_EXPIRED",
        "EXPIRED", "PRICE_INCREASE", "RENEWAL_EXTENSION",
    ]

    /// Whether a notification of this type changes the ledger (rather than only being stored).
    static func changesState(_ type: String) -> Bool {
        newTransactionTypes.contains(type) || refundTypes.contains(type) || type == refundReversedType
            || renewalStateTypes.contains(type)
    }

    /// The changes `notification` makes for the app `bundleID`, its transaction owned by `customerID`.
    static func changes(
        of notification: VerifiedNotification, type: String, bundleID: String, customerID: String?
    ) throws(ServiceError) -> [LedgerChange] {
        guard changesState(type) else { return [] }
        var changes: [LedgerChange] = []
        if let signed = notification.transaction, let customerID {
            let transaction = try ledgerTransaction(signed, customerID: customerID, bundleID: bundleID)
            changes.append(.extend(transaction))
            let id = transaction.purchase.transactionID
            if refundTypes.contains(type) {
                guard let revoked = signed.revocationDate else {
                    throw invalid("a \(type) notification's transaction has no revocationDate")
                }
                changes.append(.cancel(transactionID: id, at: revoked))
            } else if type == refundReversedType {
                changes.append(.withdrawCancellation(transactionID: id))
            }
        } else if refundTypes.contains(type) || type == refundReversedType {
            throw invalid("a \(type) notification carries no signedTransactionInfo")
        }
        if let renewal = notification.renewalInfo {
            changes.append(
                .renewal(try renewalInfo(renewal, bundleID: bundleID, transaction: notification.transaction)))
        }
        return changes
    }

    /// A verified StoreKit 2 transaction as the ledger records it: as in Apple's receipts, a purchase that names no
    /// original transaction is its own. Its revocation is left to a cancellation change.
    static func ledgerTransaction(_ signed: SignedTransaction, customerID: String, bundleID: String)
        throws(ServiceError) -> LedgerTransaction
    {
        var purchase: InAppPurchase
        do {
            purchase = try signed.inAppPurchase()
        } catch {
            throw invalid("signedTransactionInfo: \(error.message)")
        }
        purchase.cancellationDate = nil
        purchase.originalTransactionID = purchase.originalTransactionID ?? purchase.transactionID
        purchase.originalPurchaseDate = purchase.originalPurchaseDate ?? purchase.purchaseDate
        let transaction = LedgerTransaction(customerID: customerID, bundleID: bundleID, purchase: purchase)
        try ReceiptService.checkIdentifiers(transaction)
        return transaction
    }

    /// Verified renewal info as the ledger keeps it; its product defaults to the transaction's.
    static func renewalInfo(_ info: SignedRenewalInfo, bundleID: String, transaction: SignedTransaction?)
        throws(ServiceError) -> LedgerRenewalInfo
    {
        guard let original = info.originalTransactionID, !original.isEmpty else {
            throw invalid("signedRenewalInfo has no originalTransactionId")
        }
        guard let product = info.productID ?? transaction?.productID else {
            throw invalid("signedRenewalInfo has no productId")
        }
        guard let signedDate = info.signedDate else { throw invalid("signedRenewalInfo has no signedDate") }
        for (name, value) in [("originalTransactionId", original), ("productId", product)]
        where value.utf8.count > ReceiptService.maximumIdentifierLength {
            throw invalid("signedRenewalInfo.\(name) is longer than \(ReceiptService.maximumIdentifierLength) bytes")
        }
        return LedgerRenewalInfo(
            originalTransactionID: original, bundleID: bundleID, productID: product,
            autoRenewProductID: info.autoRenewProductID, autoRenews: info.autoRenewStatus.map { $0 == 1 },
            expirationIntent: info.expirationIntent, isInBillingRetryPeriod: info.isInBillingRetryPeriod,
            gracePeriodExpiresDate: info.gracePeriodExpiresDate, priceIncreaseStatus: info.priceIncreaseStatus,
            signedDate: signedDate)
    }

    /// The subscription or purchase a notification is about: its transaction's original transaction (or its own
    /// id), else its renewal info's.
    static func originalTransactionID(of notification: VerifiedNotification) -> String? {
        notification.transaction.flatMap { $0.originalTransactionID ?? $0.transactionID }
            ?? notification.renewalInfo?.originalTransactionID
    }

    static func invalid(_ message: String) -> ServiceError {
        ServiceError(status: 400, code: "invalid_notification", message: message)
    }
}

extension ReceiptService {
    /// Whose purchase a notification (or signed transaction) is, by the rule of ``NotificationEffects``.
    func customerID(appAccountToken: String?, originalTransactionID: String?) throws(ServiceError) -> String? {
        if let token = appAccountToken, !token.isEmpty { return token.lowercased() }
        guard let original = originalTransactionID else { return nil }
        let known = try ledgerOperation { () throws(LedgerError) in
            try ledger.customerID(originalTransactionID: original)
        }
        return known ?? "apple:" + original
    }
}
