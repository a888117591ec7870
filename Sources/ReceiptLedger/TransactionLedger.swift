import ReceiptModel

/// One completed transaction as the ledger keeps it: whose it is, for which app, and the purchase as receipts
/// will show it.
public struct LedgerTransaction: Hashable, Sendable {
    /// The store's own identifier of the buyer (opaque to the ledger).
    public var customerID: String
    /// The app the purchase was made in.
    public var bundleID: String
    /// The purchase. Its `cancellationDate` is set only by ``TransactionLedger/recordCancellation(transactionID:at:)``;
    /// its `unknownAttributes` are never stored.
    public var purchase: InAppPurchase
    /// `appAccountToken`: the app's own UUID for its user, lower-case, when the purchase carried one.
    public var appAccountToken: String?

    /// A transaction of `customerID` in the app `bundleID`.
    public init(customerID: String, bundleID: String, purchase: InAppPurchase, appAccountToken: String? = nil) {
        self.customerID = customerID
        self.bundleID = bundleID
        self.purchase = purchase
        self.appAccountToken = appAccountToken
    }
}

/// What recording did: stored something new, or found exactly this already stored.
public enum LedgerRecordOutcome: Hashable, Sendable {
    /// Stored now: the transaction, or the refund, was new.
    case created(LedgerTransaction)
    /// Exactly this was already stored; nothing changed.
    case alreadyRecorded(LedgerTransaction)

    /// The transaction as stored.
    public var transaction: LedgerTransaction {
        switch self {
        case .created(let transaction), .alreadyRecorded(let transaction): transaction
        }
    }
}

/// Why the ledger refused or failed.
public struct LedgerError: Error, Hashable, Sendable, CustomStringConvertible {
    public enum Code: String, Hashable, Sendable {
        /// A transaction with the same id is stored with different fields (``LedgerError/conflictingFields``), or
        /// an outgoing notification is already queued for the same URL under the same UUID.
        case conflict
        /// No transaction (or outgoing notification) has the id given.
        case notFound
        /// The database could not be opened, read or written, or has a schema this version does not know.
        case storage
    }

    /// What went wrong, for callers to switch on.
    public let code: Code
    /// Names the operation, the field or the database error; it may name transactions and customers, so it is for
    /// the store's own operators and authenticated callers only.
    public let message: String
    /// For ``Code/conflict``: the snake_case names (as in verifyReceipt JSON) of the fields that differ from the
    /// stored transaction, in a fixed order.
    public let conflictingFields: [String]
    /// What went wrong without any identifier (`database or disk is full`): safe to show to anyone.
    public let publicDetail: String

    /// An error with `code`, a human `message`, for conflicts the fields that differ, and the reason without
    /// identifiers (by default a phrase for the code).
    public init(_ code: Code, _ message: String, conflictingFields: [String] = [], publicDetail: String? = nil) {
        self.code = code
        self.message = message
        self.conflictingFields = conflictingFields
        self.publicDetail =
            publicDetail
            ?? {
                switch code {
                case .conflict: "a conflicting transaction is recorded"
                case .notFound: "no such transaction is recorded"
                case .storage: "the ledger's storage failed"
                }
            }()
    }

    /// `code: message`.
    public var description: String { "\(code.rawValue): \(message)" }
}

/// Durable storage of completed transactions. Every write is committed durably before the call returns, so a
/// transaction that was acknowledged survives a crash. Implementations are safe to call from several threads.
public protocol TransactionLedger: Sendable {
    /// Records `transaction`, idempotently on its transaction id: the same transaction again (every field but
    /// `cancellationDate` equal) returns ``LedgerRecordOutcome/alreadyRecorded(_:)`` with the stored one; a
    /// different one with the same id throws ``LedgerError/Code/conflict`` naming the fields that differ. A
    /// `cancellationDate` on `transaction` is ignored: refunds go through ``recordCancellation(transactionID:at:)``.
    ///
    /// A customer id `apple:` followed by the original transaction id stands for "not known yet" (a notification
    /// arrived before the app told whose purchase it is): recording the same transaction for another customer is
    /// then no conflict but adoption: every transaction stored for that placeholder becomes the new customer's,
    /// and the outcome is ``LedgerRecordOutcome/created(_:)`` with the transaction as stored now.
    func record(_ transaction: LedgerTransaction) throws(LedgerError) -> LedgerRecordOutcome

    /// Records a refund of the stored transaction `transactionID`, cancelled at `date`. The same date again returns
    /// ``LedgerRecordOutcome/alreadyRecorded(_:)``; a different date throws ``LedgerError/Code/conflict``
    /// (`cancellation_date`); an unknown id throws ``LedgerError/Code/notFound``.
    func recordCancellation(transactionID: String, at date: ReceiptDate) throws(LedgerError) -> LedgerRecordOutcome

    /// Withdraws the refund of the stored transaction `transactionID` (Apple's `REFUND_REVERSED`): its
    /// cancellation date is cleared. A transaction without one returns ``LedgerRecordOutcome/alreadyRecorded(_:)``
    /// unchanged; an unknown id throws ``LedgerError/Code/notFound``.
    func withdrawCancellation(transactionID: String) throws(LedgerError) -> LedgerRecordOutcome

    /// Keeps `info` as its subscription's renewal info unless the stored one was signed as late or later
    /// (notifications arrive out of order and twice): ``LedgerChangeOutcome/renewal(_:replaced:)`` with the renewal
    /// info stored afterwards.
    func recordRenewalInfo(_ info: LedgerRenewalInfo) throws(LedgerError) -> LedgerChangeOutcome

    /// Applies `changes` in order, in one commit, so that either all of their effects are durable or none is.
    ///
    /// - Without a notification, the first refusal (a conflict, an unknown transaction) is thrown and nothing is
    ///   stored.
    /// - With one, a notification already stored under its `notificationUUID` returns
    ///   ``LedgerApplication/duplicate(_:)`` and changes nothing. Otherwise a refused change is skipped (its outcome
    ///   is ``LedgerChangeOutcome/refused(_:)``) and the others applied, and the notification is stored with
    ///   ``LedgerNotification/effects`` set to the outcomes' summaries, in the same commit.
    ///
    /// Storage failures throw, and then nothing is stored.
    func apply(_ changes: [LedgerChange], notification: LedgerNotification?) throws(LedgerError) -> LedgerApplication

    /// Whether the completions of ``record(_:completion:)``, ``recordCancellation(transactionID:at:completion:)``
    /// and ``apply(_:notification:completion:)`` run on a thread of the ledger's own once the write is durable, so
    /// that the calling thread never waits for a commit (a thread serving many connections can hand a write over
    /// and go on). When false, the default, they run on the calling thread before the call returns.
    var completesWritesInBackground: Bool { get }

    /// ``record(_:)``, its result given to `completion` (see ``completesWritesInBackground``), which must not wait
    /// for another write of this ledger.
    func record(
        _ transaction: LedgerTransaction,
        completion: @escaping @Sendable (Result<LedgerRecordOutcome, LedgerError>) -> Void)

    /// ``recordCancellation(transactionID:at:)``, its result given to `completion` (see
    /// ``completesWritesInBackground``), which must not wait for another write of this ledger.
    func recordCancellation(
        transactionID: String, at date: ReceiptDate,
        completion: @escaping @Sendable (Result<LedgerRecordOutcome, LedgerError>) -> Void)

    /// ``apply(_:notification:)``, its result given to `completion` (see ``completesWritesInBackground``), which
    /// must not wait for another write of this ledger.
    func apply(
        _ changes: [LedgerChange], notification: LedgerNotification?,
        completion: @escaping @Sendable (Result<LedgerApplication, LedgerError>) -> Void)

    /// The stored transaction with this id, if any.
    func transaction(id: String) throws(LedgerError) -> LedgerTransaction?

    /// A stored transaction whose id is among `ids` (the first of them stored), if any: how a receipt's purchases
    /// are traced to the customer who made them.
    func transaction(withAnyOf ids: [String]) throws(LedgerError) -> LedgerTransaction?

    /// The customer's transactions for one app, by purchase date, then transaction id.
    func transactions(customerID: String, bundleID: String) throws(LedgerError) -> [LedgerTransaction]

    /// The customer of the stored transactions whose original transaction is `originalTransactionID` (the first
    /// of them recorded), or nil when none is stored.
    func customerID(originalTransactionID: String) throws(LedgerError) -> String?

    /// The stored renewal info of each of these subscriptions that has one, in the order of `originalTransactionIDs`.
    func renewalInfo(originalTransactionIDs: [String]) throws(LedgerError) -> [LedgerRenewalInfo]

    /// The stored notification with this `notificationUUID`, if any.
    func notification(uuid: String) throws(LedgerError) -> LedgerNotification?

    /// At most `limit` stored notifications of the app `bundleID`, newest received first: those received at or
    /// after `since` (all, when nil), and only those before the cursor `before` (from
    /// ``LedgerNotificationPage/next`` of the page before; nil for the first page).
    func notifications(bundleID: String, since: ReceiptDate?, before: Int64?, limit: Int) throws(LedgerError)
        -> LedgerNotificationPage

    /// Takes at most `limit` outgoing notifications due at `now` (``LedgerOutgoingNotification/nextAttemptDate`` at
    /// or before it), earliest due first, and in the same commit moves their next attempt to `leaseUntil`: no other
    /// thread or instance takes them before then, and if the taker dies before recording an attempt they are due
    /// again then.
    func claimDueNotifications(at now: ReceiptDate, leaseUntil: ReceiptDate, limit: Int) throws(LedgerError)
        -> [LedgerOutgoingNotification]

    /// Appends `attempt` to the outgoing notification `notificationUUID` for `url` and sets its next attempt
    /// (nil: delivered, or no retry left), durably: the notification as stored now. An unknown one throws
    /// ``LedgerError/Code/notFound``.
    func recordDeliveryAttempt(
        notificationUUID: String, url: String, attempt: LedgerDeliveryAttempt, nextAttemptDate: ReceiptDate?
    ) throws(LedgerError) -> LedgerOutgoingNotification

    /// The outgoing `TEST` notifications queued under `testToken` (one per URL), in URL order; empty when none is.
    func outgoingNotifications(testToken: String) throws(LedgerError) -> [LedgerOutgoingNotification]

    /// At most `limit` outgoing notifications that `filter` selects, oldest signed first (then in the order queued),
    /// after the cursor `after` (``LedgerOutgoingPage/next`` of the page before; nil for the first page).
    func outgoingNotifications(_ filter: LedgerOutgoingFilter, after: Int64?, limit: Int) throws(LedgerError)
        -> LedgerOutgoingPage

    /// How many transactions are stored, kept as they are written (never by scanning them all).
    func count() throws(LedgerError) -> Int

    /// Throws ``LedgerError/Code/storage`` when the ledger cannot take writes now, as far as it can tell without
    /// writing: it was opened read-only, it is closed, or its last write failed for a storage reason (a full
    /// disk) and none has succeeded since. The error's ``LedgerError/publicDetail`` says why.
    func checkWritable() throws(LedgerError)

    /// Closes the ledger: its file or its connections. Closing again does nothing; any other call afterwards
    /// throws ``LedgerError/Code/storage`` ("ledger is closed").
    func close()
}

extension TransactionLedger {
    /// False: the completions run on the calling thread.
    public var completesWritesInBackground: Bool { false }

    /// ``record(_:)`` on the calling thread, then `completion` with its result.
    public func record(
        _ transaction: LedgerTransaction,
        completion: @escaping @Sendable (Result<LedgerRecordOutcome, LedgerError>) -> Void
    ) {
        completion(Result { () throws(LedgerError) in try record(transaction) })
    }

    /// ``recordCancellation(transactionID:at:)`` on the calling thread, then `completion` with its result.
    public func recordCancellation(
        transactionID: String, at date: ReceiptDate,
        completion: @escaping @Sendable (Result<LedgerRecordOutcome, LedgerError>) -> Void
    ) {
        completion(Result { () throws(LedgerError) in try recordCancellation(transactionID: transactionID, at: date) })
    }

    /// ``apply(_:notification:)`` on the calling thread, then `completion` with its result.
    public func apply(
        _ changes: [LedgerChange], notification: LedgerNotification?,
        completion: @escaping @Sendable (Result<LedgerApplication, LedgerError>) -> Void
    ) {
        completion(Result { () throws(LedgerError) in try apply(changes, notification: notification) })
    }

    /// ``apply(_:notification:)`` without a notification: every change's outcome, in the order of `changes`, all
    /// in one commit; the first refusal is thrown and then nothing is stored.
    public func apply(_ changes: [LedgerChange]) throws(LedgerError) -> [LedgerChangeOutcome] {
        switch try apply(changes, notification: nil) {
        case .applied(let outcomes): return outcomes
        case .duplicate(let stored):
            throw LedgerError(
                .storage, "changes applied without a notification came back as notification \(stored.notificationUUID)")
        }
    }
}

/// What `receipt ledger copy` and `receipt ledger check` need of a store besides the ledger's operations: every
/// transaction, renewal info, notification and outgoing notification in a fixed order, a way to copy notifications
/// and outgoing notifications as they are stored, the schema version stored and a check of the whole store. These
/// read every row:
/// they are for maintenance, not for requests.
public protocol LedgerStore: TransactionLedger {
    /// At most `limit` stored transactions (with their cancellation dates) whose ids come after `transactionID`
    /// (all, when nil), in the order of their ids as UTF-8 bytes: pages through the whole store.
    func transactions(after transactionID: String?, limit: Int) throws(LedgerError) -> [LedgerTransaction]

    /// At most `limit` stored renewal infos whose original transaction ids come after `originalTransactionID`
    /// (all, when nil), in the order of those ids as UTF-8 bytes: pages through the whole store.
    func renewalInfos(after originalTransactionID: String?, limit: Int) throws(LedgerError) -> [LedgerRenewalInfo]

    /// At most `limit` stored notifications (with their effects) whose sequence numbers come after `sequence`
    /// (all, when nil), oldest stored first, each with its sequence number: pages through the whole store.
    func notifications(afterSequence sequence: Int64?, limit: Int) throws(LedgerError)
        -> [(sequence: Int64, notification: LedgerNotification)]

    /// Stores `notification` exactly as given, its effects included, unless one with its `notificationUUID` is
    /// stored: true when it was stored now. It gets the next sequence number, so notifications copied oldest
    /// first keep their order. For copying a ledger; the service stores notifications through
    /// ``TransactionLedger/apply(_:notification:)``.
    func copyNotification(_ notification: LedgerNotification) throws(LedgerError) -> Bool

    /// At most `limit` stored outgoing notifications (with their attempts) whose sequence numbers come after
    /// `sequence` (all, when nil), oldest queued first, each with its sequence number: pages through the whole
    /// outbox.
    func outgoingNotifications(afterSequence sequence: Int64?, limit: Int) throws(LedgerError)
        -> [(sequence: Int64, notification: LedgerOutgoingNotification)]

    /// Stores `notification` exactly as given, its attempts and next attempt included, unless one with its
    /// `notificationUUID` is stored for its URL: true when it was stored now. It gets the next sequence number, so
    /// outgoing notifications copied oldest first keep their order. For copying a ledger; the service queues them
    /// through ``TransactionLedger/apply(_:notification:)``.
    func copyOutgoingNotification(_ notification: LedgerOutgoingNotification) throws(LedgerError) -> Bool

    /// The schema version the store has.
    func storedSchemaVersion() throws(LedgerError) -> Int

    /// What is wrong with the store, as lines: exactly `["ok"]` when it is sound.
    func integrityCheck() throws(LedgerError) -> [String]
}

extension LedgerTransaction {
    /// Every stored field, each tagged with its kind and length, in column order: equal bytes for equal stored
    /// transactions (strings compared byte for byte), whichever store holds them. For digests of a whole ledger.
    public var canonicalBytes: [UInt8] {
        LedgerValue.canonicalBytes(LedgerColumn.allCases.map { $0.value(in: self) })
    }
}
