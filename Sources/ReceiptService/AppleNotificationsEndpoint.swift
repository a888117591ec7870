import HTTPServer
import ReceiptJWS
import ReceiptLedger
import ReceiptModel
import StrictJSON

/// `POST /v1/notifications/apple`: App Store Server Notifications V2 as Apple sends them, `{"signedPayload": JWS}`,
/// with no bearer token: trust comes from the signature. The outer JWS and every nested one are verified against
/// `apple_notifications.trust`, each chain at its own `signedDate`; the payload must be for one of
/// `apple_notifications.bundle_ids`, in this service's environment, and in Production carry one of its
/// `app_apple_ids`. The effects (``NotificationEffects``) and the notification are committed durably together
/// before the 200; a second delivery of the same `notificationUUID` answers 200 and changes nothing. Anything
/// unverifiable or foreign is refused with 4xx and the verifier's code, and nothing is stored.
///
/// `GET /v1/notifications?bundle_id=…[&since=RFC3339][&limit=N][&cursor=C]` (token): the notifications received
/// for an app, newest first, `limit` (default 50, at most 200) per page; `next_cursor` fetches the next page.
extension ReceiptService {
    /// Default and largest page of `GET /v1/notifications`.
    static let notificationPage = (standard: 50, maximum: 200)

    func receiveNotification(_ request: HTTPRequest) throws(ServiceError) -> HTTPResponse {
        let verifier = try appleSignedData()
        let notification: VerifiedNotification
        do {
            notification = try verifier.verifyNotification(request.body, expecting: appleExpectations)
        } catch {
            metrics.recordVerification(outcome: error.code.rawValue)
            throw Self.refusal(error, of: "the notification")
        }
        guard let uuid = notification.notificationUUID, !uuid.isEmpty,
            uuid.utf8.count <= Self.maximumIdentifierLength
        else { throw NotificationEffects.invalid("the notification has no notificationUUID") }
        guard let type = notification.notificationType, !type.isEmpty else {
            throw NotificationEffects.invalid("the notification has no notificationType")
        }
        guard let signedDate = notification.signedDate else {
            throw NotificationEffects.invalid("the notification has no signedDate")
        }
        let data = notification.data
        let bundleID = data?.bundleID ?? notification.summary?.bundleID
        try checkApp(
            bundleID: bundleID, appAppleID: data?.appAppleID ?? notification.summary?.appAppleID,
            environment: data?.environment ?? notification.summary?.environment, field: "payload.data")
        if let transaction = notification.transaction, transaction.bundleID != bundleID {
            throw ServiceError(
                status: 403, code: JWSError.Code.wrongBundleID.rawValue,
                message: "payload.data.signedTransactionInfo.bundleId differs from payload.data.bundleId")
        }
        metrics.recordVerification(outcome: "valid")
        let appBundleID = bundleID ?? ""
        let original = NotificationEffects.originalTransactionID(of: notification)
        let customerID =
            NotificationEffects.changesState(type)
            ? try customerID(
                appAccountToken: notification.transaction?.appAccountToken, originalTransactionID: original)
            : nil
        let changes = try NotificationEffects.changes(
            of: notification, type: type, bundleID: appBundleID, customerID: customerID)
        let received = LedgerNotification(
            notificationUUID: uuid, notificationType: type, subtype: notification.subtype, bundleID: appBundleID,
            signedDate: signedDate, receivedDate: clock(), customerID: customerID,
            transactionID: notification.transaction?.transactionID, originalTransactionID: original,
            signedPayload: String(decoding: notification.signedPayload.compact, as: UTF8.self))
        let application = try ledgerOperation { () throws(LedgerError) in
            try ledger.apply(changes, notification: received)
        }
        switch application {
        case .duplicate(let stored): return .json(Self.json(stored, duplicate: true))
        case .applied(let outcomes):
            var stored = received
            stored.effects = outcomes.map(\.summary)
            return .json(Self.json(stored, duplicate: false))
        }
    }

    func listNotifications(_ request: HTTPRequest) throws(ServiceError) -> HTTPResponse {
        guard let bundleID = request.queryValue("bundle_id"), !bundleID.isEmpty else {
            throw .badRequest("the query argument bundle_id is required")
        }
        var since: ReceiptDate?
        if let text = request.queryValue("since") {
            guard let date = ReceiptDate(rfc3339: text) else {
                throw .badRequest("the query argument since: \"\(text)\" is not an RFC 3339 date")
            }
            since = date
        }
        let limit = try Self.pageLimit(request)
        var before: Int64?
        if let text = request.queryValue("cursor") {
            guard let value = Int64(text), value > 0 else {
                throw .badRequest("the query argument cursor must be a next_cursor of an earlier page")
            }
            before = value
        }
        let page = try ledgerOperation { () throws(LedgerError) in
            try ledger.notifications(bundleID: bundleID, since: since, before: before, limit: limit)
        }
        var answer = JSONObject([
            "notifications": .array(page.notifications.map { .object(Self.json($0, duplicate: nil)) })
        ])
        answer["next_cursor"] = page.next.map { .string(String($0)) } ?? .null
        return .json(answer)
    }

    /// The query argument `limit`: 1 to ``notificationPage``'s maximum, its standard size when absent.
    static func pageLimit(_ request: HTTPRequest) throws(ServiceError) -> Int {
        guard let text = request.queryValue("limit") else { return notificationPage.standard }
        guard let value = Int(text), (1...notificationPage.maximum).contains(value) else {
            throw .badRequest("the query argument limit must be 1 to \(notificationPage.maximum)")
        }
        return value
    }

    /// A stored notification as the API shows it (without the signed payload); `duplicate` says, in the answer to
    /// a delivery, whether it had been received before.
    static func json(_ notification: LedgerNotification, duplicate: Bool?) -> JSONObject {
        var object = JSONObject([
            "notification_uuid": .string(notification.notificationUUID),
            "notification_type": .string(notification.notificationType),
        ])
        object["subtype"] = notification.subtype.map(JSONValue.string) ?? .null
        object["bundle_id"] = .string(notification.bundleID)
        object["signed_date"] = .string(notification.signedDate.rfc3339)
        object["received_date"] = .string(notification.receivedDate.rfc3339)
        object["customer_id"] = notification.customerID.map(JSONValue.string) ?? .null
        object["transaction_id"] = notification.transactionID.map(JSONValue.string) ?? .null
        object["original_transaction_id"] = notification.originalTransactionID.map(JSONValue.string) ?? .null
        object["effects"] = .array(notification.effects.map(JSONValue.string))
        if let duplicate { object["duplicate"] = .bool(duplicate) }
        return object
    }
}

extension ReceiptService {
    /// The verifier of Apple's signed data, or 501 when `apple_notifications` is not configured.
    func appleSignedData() throws(ServiceError) -> JWSVerifier {
        guard let signedData else {
            throw ServiceError(
                status: 501, code: "notifications_not_configured",
                message: "this service has no apple_notifications configured, so it accepts no signed Apple data")
        }
        return signedData
    }

    /// What every signed payload must say: this service's environment.
    var appleExpectations: JWSExpectations {
        JWSExpectations(environment: AppStoreEnvironment(rawValue: configuration.environment.rawValue))
    }

    /// A StoreKit 2 signed transaction, verified and for one of the configured apps.
    func verifiedTransaction(_ compact: String, field: String) throws(ServiceError) -> SignedTransaction {
        let verifier = try appleSignedData()
        let transaction: SignedTransaction
        do {
            transaction = try verifier.verifyTransaction(Array(compact.utf8), expecting: appleExpectations)
        } catch {
            metrics.recordVerification(outcome: error.code.rawValue)
            throw Self.refusal(error, of: field)
        }
        try checkApp(bundleID: transaction.bundleID, appAppleID: nil, environment: nil, field: field)
        metrics.recordVerification(outcome: "valid")
        return transaction
    }

    /// Requires one of `apple_notifications.bundle_ids` and, where the payload is Production's or carries one, one
    /// of its `app_apple_ids`.
    func checkApp(bundleID: String?, appAppleID: Int64?, environment: String?, field: String) throws(ServiceError) {
        guard let settings = configuration.appleNotifications else { return }
        guard let bundleID, settings.bundleIDs.contains(bundleID) else {
            throw ServiceError(
                status: 403, code: JWSError.Code.wrongBundleID.rawValue,
                message: "\(field).bundleId is \(bundleID.map { "\"\($0)\"" } ?? "absent"), not one of "
                    + "apple_notifications.bundle_ids")
        }
        let production = environment == AppStoreEnvironment.production.rawValue
        guard appAppleID != nil || production else { return }
        guard let appAppleID, settings.appAppleIDs.contains(appAppleID) else {
            throw ServiceError(
                status: 403, code: JWSError.Code.wrongAppAppleID.rawValue,
                message: "\(field).appAppleId is \(appAppleID.map(String.init) ?? "absent"), not one of "
                    + "apple_notifications.app_apple_ids")
        }
    }

    /// Signed data refused: 403 when it is not trusted or not for this service, 400 when it is malformed.
    static func refusal(_ error: JWSError, of what: String) -> ServiceError {
        let status: Int
        switch error.code {
        case .malformed, .tooLarge, .invalidPayload, .missingSignedDate, .unsupportedHeader: status = 400
        default: status = 403
        }
        return ServiceError(status: status, code: error.code.rawValue, message: "\(what): \(error.message)")
    }
}
