import ReceiptModel
internal import StrictJSON

/// The stored columns of an outgoing notification (table `outgoing_notifications`, one row per `notificationUUID`
/// and URL), in table order; the table also has its `sequence`, numbering the rows in the order they were queued.
enum OutboxColumn: Int32, StoredColumn {
    case notificationUUID
    case url
    case bundleID
    case notificationType
    case subtype
    case transactionID
    case originalTransactionID
    case testToken
    case signedDate
    case signedPayload
    case nextAttemptDate
    case attempts
    /// Whether the last attempt succeeded: what `attempts` says, kept as a flag so that listing only the failures
    /// needs no JSON in SQL.
    case delivered

    var name: String {
        switch self {
        case .notificationUUID: "notification_uuid"
        case .url: "url"
        case .bundleID: "bundle_id"
        case .notificationType: "notification_type"
        case .subtype: "subtype"
        case .transactionID: "transaction_id"
        case .originalTransactionID: "original_transaction_id"
        case .testToken: "test_token"
        case .signedDate: "signed_date_ms"
        case .signedPayload: "signed_payload"
        case .nextAttemptDate: "next_attempt_ms"
        case .attempts: "attempts"
        case .delivered: "delivered"
        }
    }

    var isFlag: Bool { self == .delivered }

    /// The column's value for `notification`: its attempts as a JSON array of objects.
    func value(in notification: LedgerOutgoingNotification) -> LedgerValue {
        switch self {
        case .notificationUUID: .text(notification.notificationUUID)
        case .url: .text(notification.url)
        case .bundleID: .text(notification.bundleID)
        case .notificationType: .text(notification.notificationType)
        case .subtype: LedgerValue(notification.subtype)
        case .transactionID: LedgerValue(notification.transactionID)
        case .originalTransactionID: LedgerValue(notification.originalTransactionID)
        case .testToken: LedgerValue(notification.testToken)
        case .signedDate: .integer(notification.signedDate.millisecondsSince1970)
        case .signedPayload: .text(notification.signedPayload)
        case .nextAttemptDate: LedgerValue(notification.nextAttemptDate?.millisecondsSince1970)
        case .attempts: .text(Self.encode(attempts: notification.attempts))
        case .delivered: .integer(notification.isDelivered ? 1 : 0)
        }
    }

    /// `attempts` as the column keeps them: a JSON array of `{"date_ms": …, "result": …, "http_status": …}`, the
    /// status left out when there is none.
    static func encode(attempts: [LedgerDeliveryAttempt]) -> String {
        JSONValue.array(
            attempts.map { attempt in
                var object = JSONObject([
                    "date_ms": .integer(attempt.date.millisecondsSince1970), "result": .string(attempt.result.rawValue),
                ])
                object["http_status"] = attempt.httpStatus.map { .integer($0) }
                return .object(object)
            }
        ).serialized()
    }

    /// The attempts the column holds (see ``encode(attempts:)``); `purpose` begins the error anything else throws.
    static func decode(attempts stored: String, purpose: String) throws(LedgerError) -> [LedgerDeliveryAttempt] {
        func malformed(_ rule: String) -> LedgerError {
            LedgerError(.storage, "\(purpose): column attempts \(rule)")
        }
        guard case .array(let elements) = try? JSONValue(parsing: stored) else {
            throw malformed("holds no JSON array")
        }
        var attempts: [LedgerDeliveryAttempt] = []
        for element in elements {
            do throws(JSONFieldError) {
                let reader = try JSONObjectReader(element)
                let result = try reader.requiredString("result")
                guard let known = LedgerDeliveryAttempt.Result(rawValue: result) else {
                    throw reader.error("result", "is no sendAttemptResult, found \(result)")
                }
                guard let date = try reader.integer("date_ms", in: Int64.min...Int64.max) else {
                    throw reader.error("date_ms", "is required")
                }
                attempts.append(
                    LedgerDeliveryAttempt(
                        date: ReceiptDate(millisecondsSince1970: date), result: known,
                        httpStatus: try reader.integer("http_status", in: Int.min...Int.max)))
            } catch {
                throw malformed("holds an attempt that is not one: \(error)")
            }
        }
        return attempts
    }

    /// The outgoing notification of one stored row, whose columns `text` and `integer` read (nil for NULL).
    static func decode(
        purpose: String, text: (Self) -> String?, integer: (Self) -> Int64?
    ) throws(LedgerError) -> LedgerOutgoingNotification {
        func required<Value>(_ value: Value?, _ column: Self) throws(LedgerError) -> Value {
            try requiredColumn(value, column.name, purpose: purpose)
        }
        var notification = try LedgerOutgoingNotification(
            notificationUUID: required(text(.notificationUUID), .notificationUUID), url: required(text(.url), .url),
            bundleID: required(text(.bundleID), .bundleID),
            notificationType: required(text(.notificationType), .notificationType), subtype: text(.subtype),
            transactionID: text(.transactionID), originalTransactionID: text(.originalTransactionID),
            testToken: text(.testToken),
            signedDate: ReceiptDate(millisecondsSince1970: required(integer(.signedDate), .signedDate)),
            signedPayload: required(text(.signedPayload), .signedPayload))
        notification.nextAttemptDate = integer(.nextAttemptDate).map(ReceiptDate.init(millisecondsSince1970:))
        notification.attempts = try decode(attempts: required(text(.attempts), .attempts), purpose: purpose)
        return notification
    }
}

/// The statements on the outbox, the same in every store but for how parameters are written and, where a store
/// locks rows, how they are locked.
enum OutboxSQL {
    /// Stores the outgoing notification bound in column order unless its UUID is stored for its URL; returns its
    /// sequence when stored.
    static func insert(_ style: ParameterStyle) -> String {
        OutboxColumn.insertUnlessStored(into: "outgoing_notifications", key: "notification_uuid, url", style)
    }

    /// Selects the outgoing notification columns and then the sequence of the rows matching `clause`.
    static func select(where clause: String) -> String {
        OutboxColumn.selectWithSequence(from: "outgoing_notifications", where: clause)
    }

    /// The one for the UUID of parameter 1 and the URL of parameter 2.
    static func selectOne(_ style: ParameterStyle) -> String {
        select(where: "notification_uuid = \(style.parameter(1)) AND url = \(style.parameter(2))")
    }

    /// Those due at parameter 1, earliest due first (then in the order queued), at most parameter 2 of them.
    static func due(_ style: ParameterStyle) -> String {
        select(
            where: "next_attempt_ms <= \(style.parameter(1)) ORDER BY next_attempt_ms, sequence "
                + "LIMIT \(style.parameter(2))")
    }

    /// Those queued under the test token of parameter 1, by URL.
    static func withTestToken(_ style: ParameterStyle) -> String {
        select(where: "test_token = \(style.parameter(1)) ORDER BY url")
    }

    /// Those after the sequence of parameter 1, oldest queued first, at most parameter 2 of them.
    static func afterSequence(_ style: ParameterStyle) -> String {
        select(where: "sequence > \(style.parameter(1)) ORDER BY sequence LIMIT \(style.parameter(2))")
    }

    /// Sets the next attempt, the attempts and the delivered flag (parameters 1 to 3) of the one for the UUID of
    /// parameter 4 and the URL of parameter 5.
    static func updateDelivery(_ style: ParameterStyle) -> String {
        "UPDATE outgoing_notifications SET next_attempt_ms = \(style.parameter(1)), "
            + "attempts = \(style.parameter(2)), delivered = \(style.parameter(3)) "
            + "WHERE notification_uuid = \(style.parameter(4)) AND url = \(style.parameter(5))"
    }

    /// The parameters of ``updateDelivery(_:)`` for `notification`.
    static func updateDeliveryParameters(_ notification: LedgerOutgoingNotification) -> [LedgerValue] {
        [OutboxColumn.nextAttemptDate, .attempts, .delivered, .notificationUUID, .url].map {
            $0.value(in: notification)
        }
    }

    /// Removes the one for the UUID of parameter 1 and the URL of parameter 2.
    static func delete(_ style: ParameterStyle) -> String {
        "DELETE FROM outgoing_notifications WHERE notification_uuid = \(style.parameter(1)) "
            + "AND url = \(style.parameter(2))"
    }

    /// Those of the app of parameter 1 signed in parameter 2 ..< parameter 3, of the type, subtype and original
    /// transaction of parameters 4 to 6 where those are not NULL, not delivered when parameter 7 is 1, after the
    /// row whose sequence is parameter 8 in the order signed, then queued (from the first when NULL), at most
    /// parameter 9 of them.
    static func history(_ style: ParameterStyle) -> String {
        let p = style.parameter
        return select(
            where: "bundle_id = \(p(1)) AND signed_date_ms >= \(p(2)) AND signed_date_ms < \(p(3)) "
                + "AND (CAST(\(p(4)) AS TEXT) IS NULL OR notification_type = \(p(4))) "
                + "AND (CAST(\(p(5)) AS TEXT) IS NULL OR subtype = \(p(5))) "
                + "AND (CAST(\(p(6)) AS TEXT) IS NULL OR original_transaction_id = \(p(6))) "
                + "AND (CAST(\(p(7)) AS INTEGER) = 0 OR NOT delivered) "
                + "AND (CAST(\(p(8)) AS BIGINT) IS NULL OR (signed_date_ms, sequence) > "
                + "(SELECT signed_date_ms, sequence FROM outgoing_notifications WHERE sequence = \(p(8)))) "
                + "ORDER BY signed_date_ms, sequence LIMIT \(p(9))")
    }

    /// The parameters of ``history(_:)`` for one page: one row more than `limit`, to tell whether there is a next
    /// page.
    static func historyParameters(_ filter: LedgerOutgoingFilter, after: Int64?, limit: Int) -> [LedgerValue] {
        [
            .text(filter.bundleID), .integer(filter.start.millisecondsSince1970),
            .integer(filter.end.millisecondsSince1970), LedgerValue(filter.notificationType),
            LedgerValue(filter.subtype), LedgerValue(filter.originalTransactionID),
            .integer(filter.onlyFailures ? 1 : 0), LedgerValue(after), .integer(Int64(max(limit, 0)) + 1),
        ]
    }

    /// The page of at most `limit` of `rows` (in the order listed, with their sequences; one more than `limit` when
    /// there is a next page).
    static func page(_ rows: [(sequence: Int64, notification: LedgerOutgoingNotification)], limit: Int)
        -> LedgerOutgoingPage
    {
        let (kept, next) = CustomerStateSQL.pageOf(rows, limit: limit)
        return LedgerOutgoingPage(notifications: kept, next: next)
    }
}

extension LedgerOutgoingNotification {
    /// Every stored field (attempts and next attempt included, the store's sequence number not), each tagged with its
    /// kind and length, in column order: equal bytes for equal stored outgoing notifications, whichever store holds
    /// them. For digests of a whole ledger.
    public var canonicalBytes: [UInt8] {
        LedgerValue.canonicalBytes(OutboxColumn.allCases.map { $0.value(in: self) })
    }
}
