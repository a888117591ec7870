import ReceiptModel

/// What Apple last said about one auto-renewable subscription's next period (from `signedRenewalInfo`), kept per
/// original transaction and replaced only by renewal info signed later.
public struct LedgerRenewalInfo: Hashable, Sendable {
    /// The subscription: `originalTransactionId`.
    public var originalTransactionID: String
    /// The app it belongs to.
    public var bundleID: String
    /// `productId`: the product of the current period.
    public var productID: String
    /// `autoRenewProductId`: the product that renews at the next period.
    public var autoRenewProductID: String?
    /// `autoRenewStatus`: whether the subscription renews.
    public var autoRenews: Bool?
    /// `expirationIntent`: 1 cancelled, 2 billing error, 3 declined a price increase, 4 product unavailable, 5 other.
    public var expirationIntent: Int64?
    /// `isInBillingRetryPeriod`.
    public var isInBillingRetryPeriod: Bool?
    /// `gracePeriodExpiresDate`: until when a subscription in billing retry keeps its access.
    public var gracePeriodExpiresDate: ReceiptDate?
    /// `priceIncreaseStatus`: 0 not yet consented, 1 consented or not needed.
    public var priceIncreaseStatus: Int64?
    /// `signedDate`: which of two renewal infos is newer.
    public var signedDate: ReceiptDate

    /// Renewal info of the subscription `originalTransactionID` of `bundleID`, signed at `signedDate`.
    public init(
        originalTransactionID: String, bundleID: String, productID: String, autoRenewProductID: String? = nil,
        autoRenews: Bool? = nil, expirationIntent: Int64? = nil, isInBillingRetryPeriod: Bool? = nil,
        gracePeriodExpiresDate: ReceiptDate? = nil, priceIncreaseStatus: Int64? = nil, signedDate: ReceiptDate
    ) {
        self.originalTransactionID = originalTransactionID
        self.bundleID = bundleID
        self.productID = productID
        self.autoRenewProductID = autoRenewProductID
        self.autoRenews = autoRenews
        self.expirationIntent = expirationIntent
        self.isInBillingRetryPeriod = isInBillingRetryPeriod
        self.gracePeriodExpiresDate = gracePeriodExpiresDate
        self.priceIncreaseStatus = priceIncreaseStatus
        self.signedDate = signedDate
    }
}

/// One App Store Server Notification as received and stored: enough to list it and to answer a second delivery of
/// the same `notificationUUID` without changing anything.
public struct LedgerNotification: Hashable, Sendable {
    /// `notificationUUID`: the notification's identity; a second one with the same id changes nothing.
    public var notificationUUID: String
    /// `notificationType`: `SUBSCRIBED`, `DID_RENEW`, `REFUND`, `TEST`…
    public var notificationType: String
    /// `subtype`, if any: `INITIAL_BUY`, `GRACE_PERIOD`…
    public var subtype: String?
    /// `data.bundleId`.
    public var bundleID: String
    /// The payload's `signedDate`.
    public var signedDate: ReceiptDate
    /// When the service received it (its clock).
    public var receivedDate: ReceiptDate
    /// The customer its transaction belongs to, when it carries one.
    public var customerID: String?
    /// Its transaction's `transactionId`, when it carries one.
    public var transactionID: String?
    /// Its transaction's (or renewal info's) `originalTransactionId`, when it carries one.
    public var originalTransactionID: String?
    /// What it did to the ledger, one line per change, as ``LedgerChangeOutcome/summary`` says; filled in by
    /// ``TransactionLedger/apply(_:notification:)``, which ignores what the caller puts here.
    public var effects: [String]
    /// The `signedPayload` exactly as received.
    public var signedPayload: String

    /// A received notification; `effects` are filled in when it is applied.
    public init(
        notificationUUID: String, notificationType: String, subtype: String? = nil, bundleID: String,
        signedDate: ReceiptDate, receivedDate: ReceiptDate, customerID: String? = nil, transactionID: String? = nil,
        originalTransactionID: String? = nil, effects: [String] = [], signedPayload: String
    ) {
        self.notificationUUID = notificationUUID
        self.notificationType = notificationType
        self.subtype = subtype
        self.bundleID = bundleID
        self.signedDate = signedDate
        self.receivedDate = receivedDate
        self.customerID = customerID
        self.transactionID = transactionID
        self.originalTransactionID = originalTransactionID
        self.effects = effects
        self.signedPayload = signedPayload
    }
}

/// One change to the customer state, applied with others in one commit by ``TransactionLedger/apply(_:notification:)``.
public enum LedgerChange: Hashable, Sendable {
    /// Records a transaction, as ``TransactionLedger/record(_:)`` does.
    case record(LedgerTransaction)
    /// Records a refund or revocation, as ``TransactionLedger/recordCancellation(transactionID:at:)`` does.
    case cancel(transactionID: String, at: ReceiptDate)
    /// Withdraws a refund (`REFUND_REVERSED`), as ``TransactionLedger/withdrawCancellation(transactionID:)`` does.
    case withdrawCancellation(transactionID: String)
    /// Keeps renewal info, as ``TransactionLedger/recordRenewalInfo(_:)`` does.
    case renewal(LedgerRenewalInfo)
    /// Records a subscription transaction whose expiry Apple extended (`RENEWAL_EXTENDED`): as
    /// ``TransactionLedger/record(_:)`` does, except that when it is stored with an earlier `expires_date` and
    /// otherwise the same, the stored expiry moves to its own. A later stored expiry stays, so extensions delivered
    /// out of order or twice end at the latest one.
    case extend(LedgerTransaction)
    /// Puts outgoing notifications in the outbox (``LedgerOutgoingNotification``), unless the change just before it
    /// in the same commit stored nothing new (its outcome was ``LedgerRecordOutcome/alreadyRecorded(_:)``, renewal
    /// info not replaced, an empty queue or a refusal): so a purchase posted twice is announced once. As the first change (a `TEST`
    /// notification) it is always queued. A `notificationUUID` already queued for the same URL is refused as a
    /// conflict.
    case queue([LedgerOutgoingNotification])
}

/// What applying one ``LedgerChange`` did.
public enum LedgerChangeOutcome: Hashable, Sendable {
    /// A transaction recorded (``LedgerChange/record(_:)``): stored now or already so.
    case recorded(LedgerRecordOutcome)
    /// A refund recorded (``LedgerChange/cancel(transactionID:at:)``): stored now or already so.
    case cancelled(LedgerRecordOutcome)
    /// A refund withdrawn (``LedgerChange/withdrawCancellation(transactionID:)``): now, or there was none.
    case cancellationWithdrawn(LedgerRecordOutcome)
    /// A stored transaction's expiry moved later (``LedgerChange/extend(_:)``) from `from`: the transaction as stored
    /// now. When nothing moved, the outcome is ``recorded(_:)``.
    case expiryExtended(LedgerTransaction, from: ReceiptDate)
    /// Renewal info: `replaced` when it became the stored one, false when the stored one was signed as late or
    /// later (it is then the renewal info returned).
    case renewal(LedgerRenewalInfo, replaced: Bool)
    /// Outgoing notifications put in the outbox (``LedgerChange/queue(_:)``): those queued, none when the change
    /// before stored nothing new.
    case queued([LedgerOutgoingNotification])
    /// Refused (a conflict, an unknown transaction): nothing of this change was stored. Only notifications keep
    /// going past a refusal; see ``TransactionLedger/apply(_:notification:)``.
    case refused(LedgerError)

    /// One line saying what happened, for a stored notification's ``LedgerNotification/effects``, such as
    /// `recorded transaction 1000`, `refund of transaction 1000 already recorded`, `kept renewal info of 1000` or
    /// `refused: conflict: …`.
    public var summary: String {
        func line(_ outcome: LedgerRecordOutcome, _ what: String, new: String, old: String) -> String {
            let id = outcome.transaction.purchase.transactionID
            switch outcome {
            case .created: return "\(new) \(what) \(id)"
            case .alreadyRecorded: return "\(what) \(id) \(old)"
            }
        }
        switch self {
        case .recorded(let outcome):
            return line(outcome, "transaction", new: "recorded", old: "already recorded as it is")
        case .cancelled(let outcome):
            return line(outcome, "the refund of transaction", new: "recorded", old: "already recorded")
        case .cancellationWithdrawn(let outcome):
            return line(outcome, "the refund of transaction", new: "withdrew", old: "not recorded: nothing to withdraw")
        case .expiryExtended(let transaction, let from):
            let to = transaction.purchase.expiresDate.map { " to \($0.rfc3339)" } ?? ""
            return "extended the expiry of transaction \(transaction.purchase.transactionID) from \(from.rfc3339)\(to)"
        case .renewal(let info, replaced: true): return "kept renewal info of \(info.originalTransactionID)"
        case .renewal(let info, replaced: false):
            return "renewal info of \(info.originalTransactionID) not replaced: one signed as late or later is stored"
        case .queued(let queued):
            guard let first = queued.first else {
                return "queued no notification: the change before stored nothing new"
            }
            return "queued notification \(first.notificationUUID) \(first.notificationType) for \(queued.count) URL(s)"
        case .refused(let error): return "refused: \(error)"
        }
    }
}

/// What ``TransactionLedger/apply(_:notification:)`` did.
public enum LedgerApplication: Hashable, Sendable {
    /// Every change was applied (or, for a notification, refused and said so in its effects), in one commit.
    case applied([LedgerChangeOutcome])
    /// A notification with this `notificationUUID` was already stored: nothing changed; this is the stored one.
    case duplicate(LedgerNotification)
}

/// One page of stored notifications, newest first.
public struct LedgerNotificationPage: Hashable, Sendable {
    /// The notifications, newest received first.
    public var notifications: [LedgerNotification]
    /// Where the next page starts (pass it as `before`), or nil when this page is the last.
    public var next: Int64?

    /// A page; `next` is the cursor of the page after it.
    public init(notifications: [LedgerNotification], next: Int64?) {
        self.notifications = notifications
        self.next = next
    }
}
