import HTTPServer
import ReceiptLedger
import ReceiptModel
import StrictJSON

/// What the service has been doing, for the console:
///
/// - `GET /console/api/notifications?limit=N`: the newest `N` (default 50, at most 200) notifications received
///   from Apple for the apps the service knows, and the newest `N` it sent from the outbox within the 180 days of
///   Apple's notification history, with their delivery attempts; newest first.
/// - `GET /console/api/overview`: the ledger's health and size, and the last hour's requests, errors (answers of
///   400 and more) and verifications minute by minute, oldest first, from the service's own counters.
extension ReceiptService {
    /// Outgoing notifications read per page while looking for the newest.
    private static let outboxPage = 200

    func consoleNotifications(_ request: HTTPRequest) throws(ServiceError) -> HTTPResponse {
        let limit = try Self.pageLimit(request)
        let now = clock()
        let bundleIDs = configuration.knownBundleIDs
        let sentBundleIDs = configuration.storeAPI?.apps.map(\.bundleID) ?? []
        let start = ReceiptDate(
            millisecondsSince1970: now.millisecondsSince1970 - Self.notificationHistoryDays * 86_400_000)
        let end = ReceiptDate(millisecondsSince1970: now.millisecondsSince1970 + 1)
        let (received, sent) = try ledgerOperation {
            () throws(LedgerError) -> ([LedgerNotification], [LedgerOutgoingNotification]) in
            var received: [LedgerNotification] = []
            for bundleID in bundleIDs {
                received += try ledger.notifications(bundleID: bundleID, since: nil, before: nil, limit: limit)
                    .notifications
            }
            var sent: [LedgerOutgoingNotification] = []
            for bundleID in sentBundleIDs {
                // The outbox lists oldest first: page through the window, keeping the app's newest.
                var newest: [LedgerOutgoingNotification] = []
                var after: Int64?
                repeat {
                    let page = try ledger.outgoingNotifications(
                        LedgerOutgoingFilter(bundleID: bundleID, start: start, end: end), after: after,
                        limit: Self.outboxPage)
                    newest = Array((newest + page.notifications).suffix(limit))
                    after = page.next
                } while after != nil
                sent += newest
            }
            return (received, sent)
        }
        let newestReceived = received.sorted { $0.receivedDate > $1.receivedDate }.prefix(limit)
        let newestSent = sent.sorted { $0.signedDate > $1.signedDate }.prefix(limit)
        return .json(
            JSONObject([
                "received": .array(newestReceived.map { .object(Self.json($0, duplicate: nil)) }),
                "sent": .array(newestSent.map { .object(Self.consoleJSON($0)) }),
            ]))
    }

    func consoleOverview() -> HTTPResponse {
        var health = "ok"
        do throws(LedgerError) {
            try ledger.checkWritable()
        } catch {
            health = "ledger_unavailable: \(error.publicDetail)"
        }
        let count = try? ledger.count()
        let minutes = metrics.lastHour().map { minute -> JSONValue in
            var verifications = JSONObject()
            for (outcome, count) in minute.verifications.sorted(by: { $0.key < $1.key }) {
                verifications[outcome] = .integer(count)
            }
            return .object(
                JSONObject([
                    "minute": .string(ReceiptDate(secondsSince1970: minute.minute * 60).rfc3339),
                    "requests": .integer(minute.requests), "errors": .integer(minute.errors),
                    "verifications": .object(verifications),
                ]))
        }
        return .json(
            JSONObject([
                "now": .string(clock().rfc3339), "health": .string(health),
                "ledger_transactions": count.map(JSONValue.integer) ?? .null, "minutes": .array(minutes),
            ]))
    }

    /// A notification of the outbox as the console shows it, with its delivery attempts.
    private static func consoleJSON(_ sent: LedgerOutgoingNotification) -> JSONObject {
        JSONObject([
            "notification_uuid": .string(sent.notificationUUID),
            "notification_type": .string(sent.notificationType),
            "subtype": sent.subtype.map(JSONValue.string) ?? .null,
            "bundle_id": .string(sent.bundleID),
            "url": .string(sent.url),
            "signed_date": .string(sent.signedDate.rfc3339),
            "transaction_id": sent.transactionID.map(JSONValue.string) ?? .null,
            "next_attempt_date": sent.nextAttemptDate.map { .string($0.rfc3339) } ?? .null,
            "delivered": .bool(sent.isDelivered),
            "attempts": .array(
                sent.attempts.map { attempt in
                    .object(
                        JSONObject([
                            "date": .string(attempt.date.rfc3339), "result": .string(attempt.result.rawValue),
                            "http_status": attempt.httpStatus.map { .integer(Int64($0)) } ?? .null,
                        ]))
                }),
        ])
    }
}
