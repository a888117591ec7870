import HTTPServer
import ReceiptLedger
import ReceiptModel
import StrictJSON

/// `POST /v1/transactions` and `POST /v1/transactions/{id}/cancellation`: the store reports completed purchases
/// and refunds; each is durable before it is acknowledged.
///
/// A transaction is `customer_id`, `bundle_id` and the purchase in verifyReceipt's vocabulary (`product_id`,
/// `transaction_id`, `purchase_date` required; dates as RFC 3339 or `_ms`). Recording is idempotent on
/// `transaction_id`: the same body again answers 200 with the stored record, a different one 409 naming the
/// fields that differ. For an app of `store_api` with notification URLs, a new transaction or refund also queues
/// its Server Notification in the same commit (see `OutgoingNotifications.swift`). `original_transaction_id` and `original_purchase_date` default to the transaction's own, as
/// in Apple's receipts. Every identifier (customer, bundle, product, transaction, original transaction,
/// promotional offer) is at most 255 bytes, as Apple's are. A refund is `{"cancellation_date": …}` for a recorded
/// transaction.
extension ReceiptService {

    func recordTransaction(_ request: HTTPRequest) throws(ServiceError) -> Reply {
        let body = try request.jsonBody()
        if body["signed_transaction"] != nil { return try recordSignedTransaction(body) }
        let transaction = try Self.transaction(from: body)
        let announced = try outgoingNotifications(recording: transaction)
        guard !announced.isEmpty else {
            return .afterWrite { [ledger] reply in
                ledger.record(transaction) { reply(Self.answer($0)) }
            }
        }
        return reply(applying: [.record(transaction), .queue(announced)], announcing: true)
    }

    /// `{"customer_id", "signed_transaction": JWS}`: a StoreKit 2 transaction (`jwsRepresentation`) verified
    /// against `apple_notifications`, recorded for the customer with its revocation, if it has one, in one commit.
    /// Apple's signed data may move a recorded expiry later (a renewal-date extension): see ``LedgerChange/extend(_:)``.
    private func recordSignedTransaction(_ body: JSONValue) throws(ServiceError) -> Reply {
        let customerID: String
        let compact: String
        do throws(JSONFieldError) {
            let reader = try JSONObjectReader(body)
            try reader.rejectUnknownKeys(allowed: ["customer_id", "signed_transaction"])
            customerID = try reader.requiredString("customer_id")
            compact = try reader.requiredString("signed_transaction")
        } catch {
            throw .invalidBody(error)
        }
        let signed = try verifiedTransaction(compact, field: "signed_transaction")
        let transaction = try NotificationEffects.ledgerTransaction(
            signed, customerID: customerID, bundleID: signed.bundleID ?? "")
        var changes: [LedgerChange] = [.extend(transaction)]
        if let revoked = signed.revocationDate {
            changes.append(.cancel(transactionID: transaction.purchase.transactionID, at: revoked))
        }
        return reply(applying: changes, announcing: false)
    }

    /// Applies `changes` in one commit (nothing is stored when one is refused) and answers with the transaction
    /// as the last of them left it: 201 when anything was new, else 200. When `announcing` (the changes queue
    /// outgoing notifications), the sender is woken once they are committed.
    private func reply(applying changes: [LedgerChange], announcing: Bool) -> Reply {
        .afterWrite { [ledger, notificationSender] reply in
            ledger.apply(changes, notification: nil) { result in
                if announcing, case .success = result { notificationSender?.wake() }
                reply(result.mapError(Self.serviceError).flatMap(Self.answer(applied:)))
            }
        }
    }

    /// The answer to changes applied without a notification: the transaction as the last of them left it, 201 when
    /// anything was new, else 200.
    private static func answer(applied application: LedgerApplication) -> Result<HTTPResponse, ServiceError> {
        guard case .applied(let outcomes) = application else {
            return .failure(ServiceError(status: 500, code: "internal", message: "changes came back as a notification"))
        }
        let stored = stored(outcomes)
        guard let last = stored.last else {
            return .failure(ServiceError(status: 500, code: "internal", message: "nothing was recorded"))
        }
        return .success(answer(stored.created ? .created(last) : .alreadyRecorded(last)))
    }

    /// Whether anything of `outcomes` was new, each transaction as the last of them left it, by id, and the
    /// transaction of the last of them.
    static func stored(
        _ outcomes: [LedgerChangeOutcome]
    ) -> (created: Bool, transactions: [String: LedgerTransaction], last: LedgerTransaction?) {
        var created = false
        var transactions: [String: LedgerTransaction] = [:]
        var last: LedgerTransaction?
        for outcome in outcomes {
            switch outcome {
            case .recorded(let recorded), .cancelled(let recorded), .cancellationWithdrawn(let recorded):
                if case .created = recorded { created = true }
                last = recorded.transaction
            case .expiryExtended(let extended, _):
                created = true
                last = extended
            case .renewal, .queued, .refused: continue
            }
            if let last { transactions[last.purchase.transactionID] = last }
        }
        return (created, transactions, last)
    }

    func recordCancellation(_ request: HTTPRequest, transactionID: String) throws(ServiceError) -> Reply {
        let date: ReceiptDate
        let body = try request.jsonBody()
        do throws(JSONFieldError) {
            let reader = try JSONObjectReader(body)
            try reader.rejectUnknownKeys(allowed: ["cancellation_date", "cancellation_date_ms"])
            date = try Self.date(reader, "cancellation_date")
        } catch {
            throw .invalidBody(error)
        }
        let stored = try ledgerOperation { () throws(LedgerError) in try ledger.transaction(id: transactionID) }
        let announced = try stored.map { (stored) throws(ServiceError) in
            try outgoingNotifications(refunding: stored, at: date)
        }
        guard let announced, !announced.isEmpty else {
            return .afterWrite { [ledger] reply in
                ledger.recordCancellation(transactionID: transactionID, at: date) { reply(Self.answer($0)) }
            }
        }
        return reply(applying: [.cancel(transactionID: transactionID, at: date), .queue(announced)], announcing: true)
    }

    /// Runs a ledger operation, turning its errors into responses (see ``serviceError(_:)``).
    func ledgerOperation<T>(_ operation: () throws(LedgerError) -> T) throws(ServiceError) -> T {
        do {
            return try operation()
        } catch {
            throw Self.serviceError(error)
        }
    }

    /// A ledger's error as a response: 409 for conflicts (with the fields), 404 for unknown transactions, 503 when
    /// the ledger cannot be used.
    static func serviceError(_ error: LedgerError) -> ServiceError {
        switch error.code {
        case .conflict:
            ServiceError(status: 409, code: "conflict", message: error.message, fields: error.conflictingFields)
        case .notFound: ServiceError(status: 404, code: "unknown_transaction", message: error.message)
        case .storage: ServiceError(status: 503, code: "ledger_unavailable", message: error.message)
        }
    }

    /// A record's outcome as its answer (see ``answer(_:)``), or its error's.
    static func answer(_ result: Result<LedgerRecordOutcome, LedgerError>) -> Result<HTTPResponse, ServiceError> {
        result.map(answer).mapError(serviceError)
    }

    /// 201 with the record when it is new, 200 with the stored record when it was already there.
    static func answer(_ outcome: LedgerRecordOutcome) -> HTTPResponse {
        let status: Int
        switch outcome {
        case .created: status = 201
        case .alreadyRecorded: status = 200
        }
        return .json(status: status) { answer in
            answer.addObject("transaction") { addJSON(outcome.transaction, to: &$0) }
        }
    }

    /// The record as the API shows it: `customer_id`, `bundle_id`, then the purchase's verifyReceipt fields.
    static func json(_ transaction: LedgerTransaction) -> JSONObject {
        JSONObject { addJSON(transaction, to: &$0) }
    }

    /// Adds the members of ``json(_:)`` to `object`, in the same order: how an answer writes them without the tree.
    static func addJSON<Object: JSONObjectBuilder>(_ transaction: LedgerTransaction, to object: inout Object) {
        object.add(Keys.customerID, string: transaction.customerID)
        object.add(Keys.bundleID, string: transaction.bundleID)
        transaction.purchase.addVerifyReceiptJSON(to: &object, pacificTime: nil)
        object.add(Keys.appAccountToken, string: transaction.appAccountToken)
    }

    /// The keys ``addJSON(_:to:)`` adds besides the purchase's, made once.
    private enum Keys {
        static let customerID = JSONKey("customer_id")
        static let bundleID = JSONKey("bundle_id")
        static let appAccountToken = JSONKey("app_account_token")
    }

    static func transaction(from body: JSONValue) throws(ServiceError) -> LedgerTransaction {
        var purchase: InAppPurchase
        do {
            purchase = try InAppPurchase(json: body, extraKeys: ["customer_id", "bundle_id", "app_account_token"])
        } catch {
            throw .badRequest("\(error)")
        }
        // As in Apple's receipts, a purchase that is not a renewal is its own original transaction.
        purchase.originalTransactionID = purchase.originalTransactionID ?? purchase.transactionID
        purchase.originalPurchaseDate = purchase.originalPurchaseDate ?? purchase.purchaseDate
        guard purchase.cancellationDate == nil else {
            throw .badRequest(
                "cancellation_date: record refunds with POST /v1/transactions/{transaction_id}/cancellation")
        }
        let transaction: LedgerTransaction
        do throws(JSONFieldError) {
            let reader = try JSONObjectReader(body)
            transaction = LedgerTransaction(
                customerID: try reader.requiredString("customer_id"), bundleID: try reader.requiredString("bundle_id"),
                purchase: purchase, appAccountToken: try appAccountToken(reader))
        } catch {
            throw .invalidBody(error)
        }
        try checkIdentifiers(transaction)
        return transaction
    }

    /// `app_account_token`, when given: a UUID (the app's own id for its user, as StoreKit's `appAccountToken`),
    /// kept in lower case.
    static func appAccountToken(_ reader: JSONObjectReader) throws(JSONFieldError) -> String? {
        guard let text = try reader.string("app_account_token") else { return nil }
        guard text.count == 36, DeviceIdentifier(text)?.bytes.count == 16 else {
            throw reader.error("app_account_token", "must be a UUID such as 956328d9-cc6a-47f4-be40-6953fb0ab6c7")
        }
        return text.lowercased()
    }

    /// Refuses a transaction with an empty identifier (customer, bundle, product, transaction) or one longer than
    /// ``maximumIdentifierLength`` bytes, naming the field.
    static func checkIdentifiers(_ transaction: LedgerTransaction) throws(ServiceError) {
        let purchase = transaction.purchase
        let identifiers = [
            ("customer_id", transaction.customerID), ("bundle_id", transaction.bundleID),
            ("product_id", purchase.productID), ("transaction_id", purchase.transactionID),
            ("original_transaction_id", purchase.originalTransactionID ?? ""),
            ("promotional_offer_id", purchase.promotionalOfferID ?? ""),
        ]
        for (key, value) in identifiers {
            guard !value.isEmpty || key == "original_transaction_id" || key == "promotional_offer_id" else {
                throw .invalidBody(JSONFieldError(path: key, rule: "must not be empty"))
            }
            guard value.utf8.count <= maximumIdentifierLength else {
                throw .invalidBody(JSONFieldError(path: key, rule: "must be at most \(maximumIdentifierLength) bytes"))
            }
        }
    }

    /// A required date given as `key` (RFC 3339 or verifyReceipt's form) or `key_ms` (milliseconds, a number or
    /// a string of digits), not both.
    static func date(_ reader: JSONObjectReader, _ key: String) throws(JSONFieldError) -> ReceiptDate {
        let text = try reader.string(key)
        let milliseconds: String?
        switch reader.value(key + "_ms") {
        case nil: milliseconds = nil
        case .number(let digits)?, .string(let digits)?: milliseconds = digits
        case let other?:
            throw JSONFieldError(path: reader.path(key + "_ms"), rule: "must be milliseconds, found \(other.kindName)")
        }
        switch (text, milliseconds) {
        case (let text?, nil):
            guard let date = ReceiptDate(rfc3339: text) ?? ReceiptDate(appleFormat: text) else {
                throw JSONFieldError(
                    path: reader.path(key),
                    rule: "\"\(text)\" is not a date (use RFC 3339 such as 2024-06-05T12:00:00Z)")
            }
            return date
        case (nil, let digits?):
            guard let value = Int64(digits),
                ReceiptDate.earliest.millisecondsSince1970...ReceiptDate.latest.millisecondsSince1970 ~= value
            else {
                throw JSONFieldError(
                    path: reader.path(key + "_ms"), rule: "must be milliseconds within years 0000-9999")
            }
            return ReceiptDate(millisecondsSince1970: value)
        case (nil, nil): throw JSONFieldError(path: reader.path(key), rule: "is required")
        case (.some, .some): throw JSONFieldError(path: reader.path(key), rule: "give \(key) or \(key)_ms, not both")
        }
    }
}
