import HTTPServer
import ReceiptDER
import ReceiptJWS
import ReceiptLedger
import ReceiptModel
import StrictJSON

/// Apple's notification endpoints of the App Store Server API, over the ledger's outbox:
///
/// - `POST /inApps/v1/notifications/test` queues a `TEST` notification to each of the app's URLs and answers its
///   `testNotificationToken` (4040007 when the app has no notification URL);
/// - `GET /inApps/v1/notifications/test/{testNotificationToken}` answers its `signedPayload` and `sendAttempts`
///   (4040008 for a token it does not know);
/// - `POST /inApps/v1/notifications/history` lists what was sent (`startDate` and `endDate` required, no more
///   than 180 days back; `notificationType` and `notificationSubtype`, or `transactionId`; `onlyFailures`), 20 a
///   page, continued with the `paginationToken` query argument.
extension ReceiptService {
    /// Notifications in one page of history, as Apple's.
    static let notificationHistoryPageSize = 20
    /// How far back history reaches, as Apple's: 180 days.
    static let notificationHistoryDays: Int64 = 180

    func requestTestNotification(bundleID: String) throws(ServiceError) -> HTTPResponse {
        let token = NotificationContent.randomUUID()
        let queued = try outgoingTestNotifications(bundleID: bundleID, testToken: token)
        guard !queued.isEmpty else {
            throw .apple(404, 4_040_007, "Server notification URL not found: \(bundleID) has no notification_urls")
        }
        _ = try storeAPILedger { () throws(LedgerError) in try ledger.apply([.queue(queued)]) }
        notificationSender?.wake()
        return .json(JSONObject(["testNotificationToken": .string(token)]))
    }

    func testNotificationStatus(bundleID: String, token: String) throws(ServiceError) -> HTTPResponse {
        let sent = try storeAPILedger { () throws(LedgerError) in try ledger.outgoingNotifications(testToken: token) }
            .filter { $0.bundleID == bundleID }
        guard let first = sent.first else {
            throw .apple(404, 4_040_008, "Test notification not found: \(token)")
        }
        let attempts = sent.flatMap(\.attempts).sorted { $0.date < $1.date }
        return .json(
            JSONObject([
                "signedPayload": .string(first.signedPayload),
                "sendAttempts": .array(attempts.map(Self.attemptJSON)),
            ]))
    }

    func notificationHistory(_ request: HTTPRequest, bundleID: String) throws(ServiceError) -> HTTPResponse {
        var filter = try notificationHistoryFilter(request.jsonBody(), bundleID: bundleID)
        var after: Int64?
        if let token = request.queryValue("paginationToken") {
            guard let bytes = try? Base64URL.decode(Array(token.utf8)),
                let sequence = Int64(String(decoding: bytes, as: UTF8.self))
            else {
                throw .apple(400, 4_000_014, "Invalid pagination token: \"\(token)\"")
            }
            after = sequence
        }
        if let transactionID = filter.originalTransactionID {
            let stored = try storeAPILedger { () throws(LedgerError) in try ledger.transaction(id: transactionID) }
            if let stored, stored.bundleID == bundleID {
                filter.originalTransactionID = stored.purchase.originalTransactionID ?? transactionID
            }
        }
        let page = try storeAPILedger { () throws(LedgerError) in
            try ledger.outgoingNotifications(filter, after: after, limit: Self.notificationHistoryPageSize)
        }
        var answer = JSONObject()
        if let next = page.next { answer["paginationToken"] = .string(Base64URL.encode(Array(String(next).utf8))) }
        answer["hasMore"] = .bool(page.next != nil)
        answer["notificationHistory"] = .array(
            page.notifications.map { sent in
                .object(
                    JSONObject([
                        "sendAttempts": .array(sent.attempts.map(Self.attemptJSON)),
                        "signedPayload": .string(sent.signedPayload),
                    ]))
            })
        return .json(answer)
    }

    /// The history request's body as a filter of the app's outbox, with Apple's codes for what is wrong;
    /// `transactionId` is put as the original transaction id, which the caller resolves.
    private func notificationHistoryFilter(_ body: JSONValue, bundleID: String) throws(ServiceError)
        -> LedgerOutgoingFilter
    {
        guard case .object(let object) = body else {
            throw .apple(400, 4_000_000, "Bad request: the body must be a JSON object")
        }
        func member(_ name: String) -> JSONValue? {
            guard let value = object[name], value != .null else { return nil }
            return value
        }
        func date(_ name: String, _ code: Int, _ what: String) throws(ServiceError) -> ReceiptDate {
            guard case .number(let text)? = member(name), let milliseconds = Int64(text), milliseconds >= 0 else {
                throw .apple(400, code, "\(what): \(name) must be milliseconds since 1970")
            }
            return ReceiptDate(millisecondsSince1970: milliseconds)
        }
        func text(_ name: String) throws(ServiceError) -> String? {
            guard let value = member(name) else { return nil }
            guard case .string(let text) = value else {
                throw .apple(400, 4_000_000, "Bad request: \(name) must be a string")
            }
            return text
        }
        let start = try date("startDate", 4_000_015, "Invalid start date")
        let end = try date("endDate", 4_000_016, "Invalid end date")
        guard start <= end else {
            throw .apple(400, 4_000_013, "Start date after end date: startDate is after endDate")
        }
        let earliest = clock().millisecondsSince1970 - Self.notificationHistoryDays * 86_400_000
        guard start.millisecondsSince1970 >= earliest else {
            throw .apple(
                400, 4_000_012, "Start date too far in past: history reaches \(Self.notificationHistoryDays) days back")
        }
        var filter = LedgerOutgoingFilter(bundleID: bundleID, start: start, end: end)
        filter.notificationType = try text("notificationType")
        filter.subtype = try text("notificationSubtype")
        if let type = filter.notificationType,
            type.isEmpty || !type.utf8.allSatisfy({ (65...90).contains($0) || $0 == UInt8(ascii: "_") })
        {
            throw .apple(400, 4_000_018, "Invalid notification type: \"\(type)\" is not one of Apple's names")
        }
        let originalTransactionID = try text("originalTransactionId")
        filter.originalTransactionID = try text("transactionId") ?? originalTransactionID
        if filter.originalTransactionID != nil && filter.notificationType != nil {
            throw .apple(
                400, 4_000_019, "Multiple filters supplied: give notificationType or transactionId, not both")
        }
        switch member("onlyFailures") {
        case nil: break
        case .bool(let only)?: filter.onlyFailures = only
        default: throw .apple(400, 4_000_000, "Bad request: onlyFailures must be true or false")
        }
        return filter
    }

    /// One of Apple's `sendAttempts`: `attemptDate` (milliseconds) and `sendAttemptResult`.
    static func attemptJSON(_ attempt: LedgerDeliveryAttempt) -> JSONValue {
        .object(
            JSONObject([
                "attemptDate": .integer(attempt.date.millisecondsSince1970),
                "sendAttemptResult": .string(attempt.result.rawValue),
            ]))
    }
}
