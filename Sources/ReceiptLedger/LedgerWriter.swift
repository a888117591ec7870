import ReceiptModel

/// The rows one store reads and writes inside one database transaction, of which every write of the ledger is
/// made: the rules of recording, refunds, renewal info and notifications are written once, here, for every store.
protocol LedgerWriter {
    /// Inserts `transaction` (as stored: see ``LedgerColumn/storable(_:)``) unless its id is stored; true when it
    /// was inserted now.
    func insert(_ transaction: LedgerTransaction) throws(LedgerError) -> Bool

    /// The stored transaction `id`, locked until the database transaction ends where the store locks rows.
    func lockedTransaction(id: String) throws(LedgerError) -> LedgerTransaction?

    /// Sets the date `column` (the cancellation or expiry date) of the stored transaction `transactionID`, or
    /// clears it when `date` is nil.
    func setDate(_ date: ReceiptDate?, of column: LedgerColumn, transactionID: String) throws(LedgerError)

    /// A customer other than `placeholder` holding a transaction of the original transaction
    /// `originalTransactionID`.
    func knownCustomer(originalTransactionID: String, placeholder: String) throws(LedgerError) -> String?

    /// Gives every transaction of the customer `placeholder` to the customer `customerID`.
    func reassignCustomer(from placeholder: String, to customerID: String) throws(LedgerError)

    /// Stores `info` unless renewal info of its subscription signed as late or later is stored: the stored row
    /// when it was stored now, else nil.
    func upsert(_ info: LedgerRenewalInfo) throws(LedgerError) -> LedgerRenewalInfo?

    /// The stored renewal info of the subscription `originalTransactionID`.
    func renewalInfo(originalTransactionID: String) throws(LedgerError) -> LedgerRenewalInfo?

    /// Stores `notification` as given unless its UUID is stored; true when it was stored now.
    func insert(_ notification: LedgerNotification) throws(LedgerError) -> Bool

    /// The stored notification with this UUID.
    func notification(uuid: String) throws(LedgerError) -> LedgerNotification?

    /// Sets the effects of the stored notification `notificationUUID`.
    func setEffects(_ effects: [String], notificationUUID: String) throws(LedgerError)

    /// Stores the outgoing notification as given unless its UUID is stored for its URL; true when it was stored
    /// now.
    func insert(_ outgoing: LedgerOutgoingNotification) throws(LedgerError) -> Bool

    /// Removes the outgoing notification `notificationUUID` for `url`.
    func deleteOutgoingNotification(notificationUUID: String, url: String) throws(LedgerError)

    /// The stored outgoing notification `notificationUUID` for `url`, locked until the database transaction ends
    /// where the store locks rows.
    func lockedOutgoingNotification(notificationUUID: String, url: String) throws(LedgerError)
        -> LedgerOutgoingNotification?

    /// At most `limit` stored outgoing notifications due at `now`, earliest due first, then in the order queued:
    /// where the store locks rows, locked until the database transaction ends, leaving out those another
    /// transaction holds locked.
    func lockedDueNotifications(at now: ReceiptDate, limit: Int) throws(LedgerError) -> [LedgerOutgoingNotification]

    /// Stores the next attempt and the attempts of `outgoing` in its row.
    func updateDelivery(of outgoing: LedgerOutgoingNotification) throws(LedgerError)
}

extension LedgerWriter {
    /// ``TransactionLedger/record(_:)``.
    func record(_ transaction: LedgerTransaction) throws(LedgerError) -> LedgerRecordOutcome {
        let candidate = LedgerColumn.storable(transaction)
        if try insert(candidate) { return .created(candidate) }
        return try replay(candidate, over: try stored(candidate))
    }

    /// ``LedgerChange/extend(_:)``: recorded as ``record(_:)`` records, or, when stored with an earlier expiry and
    /// otherwise the same, that expiry moved to the transaction's. Whose it is is settled in this commit: a
    /// placeholder customer gives way to a known customer of the original transaction, and a new transaction of a
    /// known customer takes the placeholder's transactions.
    func extend(_ transaction: LedgerTransaction) throws(LedgerError) -> LedgerChangeOutcome {
        var candidate = LedgerColumn.storable(transaction)
        let placeholder = candidate.purchase.originalTransactionID.map { LedgerColumn.placeholderPrefix + $0 }
        if let original = candidate.purchase.originalTransactionID, let placeholder,
            LedgerValue.text(candidate.customerID) == .text(placeholder),
            let known = try knownCustomer(originalTransactionID: original, placeholder: placeholder)
        {
            candidate.customerID = known
        }
        if try insert(candidate) {
            if let placeholder, LedgerValue.text(candidate.customerID) != .text(placeholder) {
                try reassignCustomer(from: placeholder, to: candidate.customerID)
            }
            return .recorded(.created(candidate))
        }
        let stored = try stored(candidate)
        guard let expiry = candidate.purchase.expiresDate, let storedExpiry = stored.purchase.expiresDate else {
            return .recorded(try replay(candidate, over: stored))
        }
        candidate.purchase.expiresDate = storedExpiry
        let outcome = try replay(candidate, over: stored)
        guard expiry > storedExpiry else { return .recorded(outcome) }
        let id = candidate.purchase.transactionID
        try setDate(expiry, of: .expiresDate, transactionID: id)
        var extended = outcome.transaction
        extended.purchase.expiresDate = expiry
        return .expiryExtended(extended, from: storedExpiry)
    }

    /// The stored transaction with `candidate`'s id, which inserting it found.
    private func stored(_ candidate: LedgerTransaction) throws(LedgerError) -> LedgerTransaction {
        let id = candidate.purchase.transactionID
        guard let stored = try lockedTransaction(id: id) else {
            throw LedgerError(.storage, "recording transaction \(id): the stored transaction it matched is gone")
        }
        return stored
    }

    /// Recording `candidate` over the transaction `stored` with its id: already recorded, a placeholder adopted, or
    /// a conflict (see ``LedgerColumn/replaying(_:over:)``).
    private func replay(
        _ candidate: LedgerTransaction, over stored: LedgerTransaction
    ) throws(LedgerError) -> LedgerRecordOutcome {
        switch try LedgerColumn.replaying(candidate, over: stored) {
        case .alreadyRecorded(let stored):
            return .alreadyRecorded(stored)
        case .adopting(let placeholder, let adopted):
            try reassignCustomer(from: placeholder, to: adopted.customerID)
            return .created(adopted)
        }
    }

    /// ``TransactionLedger/recordCancellation(transactionID:at:)``.
    func recordCancellation(transactionID: String, at date: ReceiptDate) throws(LedgerError) -> LedgerRecordOutcome {
        let (cancelled, isNew) = try LedgerColumn.cancelling(
            lockedTransaction(id: transactionID), transactionID: transactionID, at: date)
        guard isNew else { return .alreadyRecorded(cancelled) }
        try setDate(date, of: .cancellationDate, transactionID: transactionID)
        return .created(cancelled)
    }

    /// ``TransactionLedger/withdrawCancellation(transactionID:)``.
    func withdrawCancellation(transactionID: String) throws(LedgerError) -> LedgerRecordOutcome {
        let (withdrawn, isNew) = try LedgerColumn.withdrawing(
            lockedTransaction(id: transactionID), transactionID: transactionID)
        guard isNew else { return .alreadyRecorded(withdrawn) }
        try setDate(nil, of: .cancellationDate, transactionID: transactionID)
        return .created(withdrawn)
    }

    /// ``TransactionLedger/recordRenewalInfo(_:)``.
    func recordRenewalInfo(_ info: LedgerRenewalInfo) throws(LedgerError) -> LedgerChangeOutcome {
        if let stored = try upsert(info) { return .renewal(stored, replaced: true) }
        guard let stored = try renewalInfo(originalTransactionID: info.originalTransactionID) else {
            throw LedgerError(
                .storage,
                "keeping the renewal info of \(info.originalTransactionID): the stored one it was kept out by is gone")
        }
        return .renewal(stored, replaced: false)
    }

    /// ``LedgerChange/queue(_:)`` after the change whose outcome was `previous` (nil when it comes first): every
    /// one of `notifications` stored, or, when `previous` stored nothing new, none. One already stored for its URL
    /// is a conflict, and then the others stored by this change are removed again, so that it stores nothing even
    /// when the commit goes on.
    func queue(
        _ notifications: [LedgerOutgoingNotification], after previous: LedgerChangeOutcome?
    ) throws(LedgerError) -> LedgerChangeOutcome {
        if let previous, !previous.storedSomethingNew { return .queued([]) }
        var queued: [LedgerOutgoingNotification] = []
        for outgoing in notifications {
            guard try insert(outgoing) else {
                for stored in queued {
                    try deleteOutgoingNotification(notificationUUID: stored.notificationUUID, url: stored.url)
                }
                throw LedgerError(
                    .conflict, "notification \(outgoing.notificationUUID) is already queued for \(outgoing.url)",
                    publicDetail: "a notification with this UUID is already queued for this URL")
            }
            queued.append(outgoing)
        }
        return .queued(queued)
    }

    /// ``TransactionLedger/claimDueNotifications(at:leaseUntil:limit:)``.
    func claimDueNotifications(
        at now: ReceiptDate, leaseUntil: ReceiptDate, limit: Int
    ) throws(LedgerError) -> [LedgerOutgoingNotification] {
        var claimed = try lockedDueNotifications(at: now, limit: limit)
        for index in claimed.indices {
            claimed[index].nextAttemptDate = leaseUntil
            try updateDelivery(of: claimed[index])
        }
        return claimed
    }

    /// ``TransactionLedger/recordDeliveryAttempt(notificationUUID:url:attempt:nextAttemptDate:)``.
    func recordDeliveryAttempt(
        notificationUUID: String, url: String, attempt: LedgerDeliveryAttempt, nextAttemptDate: ReceiptDate?
    ) throws(LedgerError) -> LedgerOutgoingNotification {
        guard var outgoing = try lockedOutgoingNotification(notificationUUID: notificationUUID, url: url) else {
            throw LedgerError(
                .notFound, "no notification \(notificationUUID) is queued for \(url)",
                publicDetail: "no such outgoing notification is queued")
        }
        outgoing.attempts.append(attempt)
        outgoing.nextAttemptDate = nextAttemptDate
        try updateDelivery(of: outgoing)
        return outgoing
    }

    /// What `change` did once made, after the change whose outcome was `previous` (nil when it comes first).
    func make(_ change: LedgerChange, after previous: LedgerChangeOutcome?) throws(LedgerError) -> LedgerChangeOutcome {
        switch change {
        case .record(let transaction): .recorded(try record(transaction))
        case .cancel(let transactionID, let date):
            .cancelled(try recordCancellation(transactionID: transactionID, at: date))
        case .withdrawCancellation(let transactionID):
            .cancellationWithdrawn(try withdrawCancellation(transactionID: transactionID))
        case .renewal(let info): try recordRenewalInfo(info)
        case .extend(let transaction): try extend(transaction)
        case .queue(let notifications): try queue(notifications, after: previous)
        }
    }

    /// ``TransactionLedger/apply(_:notification:)``, inside the one database transaction the caller commits. The
    /// notification is stored first, so that a concurrent delivery of the same one waits for it and finds it.
    func apply(_ changes: [LedgerChange], notification: LedgerNotification?) throws(LedgerError) -> LedgerApplication {
        guard var notification else {
            var outcomes: [LedgerChangeOutcome] = []
            for change in changes { outcomes.append(try make(change, after: outcomes.last)) }
            return .applied(outcomes)
        }
        notification.effects = []
        guard try insert(notification) else {
            guard let stored = try self.notification(uuid: notification.notificationUUID) else {
                throw LedgerError(
                    .storage, "storing notification \(notification.notificationUUID): the stored one is gone")
            }
            return .duplicate(stored)
        }
        var outcomes: [LedgerChangeOutcome] = []
        for change in changes {
            do throws(LedgerError) {
                outcomes.append(try make(change, after: outcomes.last))
            } catch {
                guard error.code != .storage else { throw error }
                outcomes.append(.refused(error))
            }
        }
        try setEffects(outcomes.map(\.summary), notificationUUID: notification.notificationUUID)
        return .applied(outcomes)
    }
}

extension LedgerChangeOutcome {
    /// Whether the change stored something new: what a ``LedgerChange/queue(_:)`` right after it needs to be
    /// queued. A refusal stored nothing.
    var storedSomethingNew: Bool {
        switch self {
        case .recorded(let outcome), .cancelled(let outcome), .cancellationWithdrawn(let outcome):
            if case .created = outcome { true } else { false }
        case .expiryExtended: true
        case .renewal(_, let replaced): replaced
        case .queued(let queued): !queued.isEmpty
        case .refused: false
        }
    }
}
