import ReceiptModel

/// One App Store Server Notification V2 that the store sends about what it recorded itself, to one of its app's
/// notification URLs: kept in the ledger's outbox from the commit that queued it, so that a restart or a crash
/// neither loses it nor sends it under another `notificationUUID`.
public struct LedgerOutgoingNotification: Hashable, Sendable {
    /// `notificationUUID`: the same on every attempt, so that the receiver can drop a second delivery.
    public var notificationUUID: String
    /// Where it goes: an `http://` URL of the app's `notification_urls`. A notification sent to two URLs is two
    /// outgoing notifications with the same `notificationUUID`.
    public var url: String
    /// `data.bundleId`.
    public var bundleID: String
    /// `notificationType`: `ONE_TIME_CHARGE`, `SUBSCRIBED`, `DID_RENEW`, `REFUND`, `TEST`.
    public var notificationType: String
    /// `subtype`, if any: `INITIAL_BUY`, `RESUBSCRIBE`.
    public var subtype: String?
    /// The transaction it is about (`transactionId`), when it is about one.
    public var transactionID: String?
    /// That transaction's `originalTransactionId`, when it is about one.
    public var originalTransactionID: String?
    /// For a `TEST` notification, the `testNotificationToken` it was requested under; nil for every other.
    public var testToken: String?
    /// The payload's `signedDate`: when it was queued, and the order the history lists it in.
    public var signedDate: ReceiptDate
    /// The JWS `signedPayload` the receiver gets, the same on every attempt.
    public var signedPayload: String
    /// When the next attempt is due; nil once it was delivered or every retry was spent.
    public var nextAttemptDate: ReceiptDate?
    /// Every attempt made, oldest first.
    public var attempts: [LedgerDeliveryAttempt]

    /// A notification for `url`, due at once (`nextAttemptDate` = `signedDate`) with no attempt made.
    public init(
        notificationUUID: String, url: String, bundleID: String, notificationType: String, subtype: String? = nil,
        transactionID: String? = nil, originalTransactionID: String? = nil, testToken: String? = nil,
        signedDate: ReceiptDate, signedPayload: String
    ) {
        self.notificationUUID = notificationUUID
        self.url = url
        self.bundleID = bundleID
        self.notificationType = notificationType
        self.subtype = subtype
        self.transactionID = transactionID
        self.originalTransactionID = originalTransactionID
        self.testToken = testToken
        self.signedDate = signedDate
        self.signedPayload = signedPayload
        nextAttemptDate = signedDate
        attempts = []
    }

    /// Whether it was delivered: its last attempt succeeded.
    public var isDelivered: Bool { attempts.last?.result == .success }
}

/// One attempt to deliver an outgoing notification, as Apple's notification history reports it.
public struct LedgerDeliveryAttempt: Hashable, Sendable {
    /// `sendAttemptResult`, in Apple's vocabulary.
    public enum Result: String, Hashable, Sendable, CaseIterable {
        case success = "SUCCESS"
        case timedOut = "TIMED_OUT"
        case tlsIssue = "TLS_ISSUE"
        case circularRedirect = "CIRCULAR_REDIRECT"
        case noResponse = "NO_RESPONSE"
        case socketIssue = "SOCKET_ISSUE"
        case unsupportedCharset = "UNSUPPORTED_CHARSET"
        case invalidResponse = "INVALID_RESPONSE"
        case prematureClose = "PREMATURE_CLOSE"
        case unsuccessfulHTTPResponseCode = "UNSUCCESSFUL_HTTP_RESPONSE_CODE"
        case other = "OTHER"
    }

    /// `attemptDate`.
    public var date: ReceiptDate
    /// `sendAttemptResult`.
    public var result: Result
    /// The receiver's HTTP status, when it answered with one.
    public var httpStatus: Int?

    /// An attempt made at `date` that ended with `result` (and the receiver's status, when it answered).
    public init(date: ReceiptDate, result: Result, httpStatus: Int? = nil) {
        self.date = date
        self.result = result
        self.httpStatus = httpStatus
    }
}

/// Which outgoing notifications ``TransactionLedger/outgoingNotifications(_:after:limit:)`` lists, as the filters of
/// Apple's notification history request.
public struct LedgerOutgoingFilter: Hashable, Sendable {
    /// The app (`bid` of the caller's token).
    public var bundleID: String
    /// Signed at or after this instant (`startDate`).
    public var start: ReceiptDate
    /// Signed before this instant (`endDate`).
    public var end: ReceiptDate
    /// Only this `notificationType`, when set.
    public var notificationType: String?
    /// Only this `subtype`, when set.
    public var subtype: String?
    /// Only those about this original transaction, when set.
    public var originalTransactionID: String?
    /// Only those not delivered (`onlyFailures`): the last attempt failed, or none was made.
    public var onlyFailures: Bool

    /// Notifications of `bundleID` signed in `start ..< end`, with no other filter.
    public init(bundleID: String, start: ReceiptDate, end: ReceiptDate) {
        self.bundleID = bundleID
        self.start = start
        self.end = end
        notificationType = nil
        subtype = nil
        originalTransactionID = nil
        onlyFailures = false
    }
}

/// One page of outgoing notifications, oldest signed first.
public struct LedgerOutgoingPage: Hashable, Sendable {
    /// The notifications, oldest signed first.
    public var notifications: [LedgerOutgoingNotification]
    /// Where the next page starts (pass it as `after`), or nil when this page is the last.
    public var next: Int64?

    /// A page; `next` is the cursor of the page after it.
    public init(notifications: [LedgerOutgoingNotification], next: Int64?) {
        self.notifications = notifications
        self.next = next
    }
}
