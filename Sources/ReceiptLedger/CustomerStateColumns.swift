import ReceiptModel
internal import StrictJSON

/// The columns of one of the ledger's tables, in table order: the order rows are read and written in. Their raw
/// values are their positions, from 0.
protocol StoredColumn: CaseIterable, RawRepresentable where RawValue == Int32, AllCases == [Self] {
    /// The SQL column.
    var name: String { get }
    /// Whether the column holds a flag (0 or 1).
    var isFlag: Bool { get }

    /// What one row of the table is.
    associatedtype Row
    /// The row whose columns `text` and `integer` read (nil for NULL); `purpose` begins the error a malformed row
    /// throws.
    static func decode(purpose: String, text: (Self) -> String?, integer: (Self) -> Int64?) throws(LedgerError) -> Row
}

extension StoredColumn {
    /// Every column's name, comma-separated, in table order.
    static var list: String { allCases.map(\.name).joined(separator: ", ") }

    /// A parameter for every column, in table order, numbered from 1.
    static func parameters(_ style: ParameterStyle) -> String {
        allCases.map { style.parameter(Int($0.rawValue) + 1) }.joined(separator: ", ")
    }

    /// Inserts into `table` the row bound in column order unless one with the same `key` (its columns,
    /// comma-separated) is stored; returns the row's `sequence` when it was inserted.
    static func insertUnlessStored(into table: String, key: String, _ style: ParameterStyle) -> String {
        "INSERT INTO \(table) (\(list)) VALUES (\(parameters(style))) ON CONFLICT (\(key)) DO NOTHING RETURNING sequence"
    }

    /// Selects every column and then the `sequence` of the rows of `table` matching `clause`.
    static func selectWithSequence(from table: String, where clause: String) -> String {
        "SELECT \(list), sequence FROM \(table) WHERE \(clause)"
    }
}

/// How a store numbers the parameters of a statement: SQLite `?1`, PostgreSQL `$1`.
enum ParameterStyle {
    case sqlite
    case postgreSQL

    /// Parameter `number` (from 1).
    func parameter(_ number: Int) -> String {
        switch self {
        case .sqlite: "?\(number)"
        case .postgreSQL: "$\(number)"
        }
    }
}

/// A NULL in a column that must hold a value, as the error reading it throws.
func requiredColumn<Value>(_ value: Value?, _ name: String, purpose: String) throws(LedgerError) -> Value {
    guard let value else { throw LedgerError(.storage, "\(purpose): column \(name) is NULL") }
    return value
}

/// The stored columns of a subscription's renewal info (table `renewal_info`), in table order.
enum RenewalColumn: Int32, StoredColumn {
    case originalTransactionID
    case bundleID
    case productID
    case autoRenewProductID
    case autoRenews
    case expirationIntent
    case isInBillingRetryPeriod
    case gracePeriodExpiresDate
    case priceIncreaseStatus
    case signedDate

    var name: String {
        switch self {
        case .originalTransactionID: "original_transaction_id"
        case .bundleID: "bundle_id"
        case .productID: "product_id"
        case .autoRenewProductID: "auto_renew_product_id"
        case .autoRenews: "auto_renews"
        case .expirationIntent: "expiration_intent"
        case .isInBillingRetryPeriod: "is_in_billing_retry_period"
        case .gracePeriodExpiresDate: "grace_period_expires_date_ms"
        case .priceIncreaseStatus: "price_increase_status"
        case .signedDate: "signed_date_ms"
        }
    }

    var isFlag: Bool { self == .autoRenews || self == .isInBillingRetryPeriod }

    /// The column's value for `info`.
    func value(in info: LedgerRenewalInfo) -> LedgerValue {
        switch self {
        case .originalTransactionID: .text(info.originalTransactionID)
        case .bundleID: .text(info.bundleID)
        case .productID: .text(info.productID)
        case .autoRenewProductID: LedgerValue(info.autoRenewProductID)
        case .autoRenews: LedgerValue(info.autoRenews.map { $0 ? 1 : 0 })
        case .expirationIntent: LedgerValue(info.expirationIntent)
        case .isInBillingRetryPeriod: LedgerValue(info.isInBillingRetryPeriod.map { $0 ? 1 : 0 })
        case .gracePeriodExpiresDate: LedgerValue(info.gracePeriodExpiresDate?.millisecondsSince1970)
        case .priceIncreaseStatus: LedgerValue(info.priceIncreaseStatus)
        case .signedDate: .integer(info.signedDate.millisecondsSince1970)
        }
    }

    /// The renewal info of one stored row, whose columns `text` and `integer` read (nil for NULL).
    static func decode(
        purpose: String, text: (Self) -> String?, integer: (Self) -> Int64?
    ) throws(LedgerError) -> LedgerRenewalInfo {
        func required<Value>(_ value: Value?, _ column: Self) throws(LedgerError) -> Value {
            try requiredColumn(value, column.name, purpose: purpose)
        }
        return try LedgerRenewalInfo(
            originalTransactionID: required(text(.originalTransactionID), .originalTransactionID),
            bundleID: required(text(.bundleID), .bundleID), productID: required(text(.productID), .productID),
            autoRenewProductID: text(.autoRenewProductID), autoRenews: integer(.autoRenews).map { $0 != 0 },
            expirationIntent: integer(.expirationIntent),
            isInBillingRetryPeriod: integer(.isInBillingRetryPeriod).map { $0 != 0 },
            gracePeriodExpiresDate: integer(.gracePeriodExpiresDate).map(ReceiptDate.init(millisecondsSince1970:)),
            priceIncreaseStatus: integer(.priceIncreaseStatus),
            signedDate: ReceiptDate(millisecondsSince1970: required(integer(.signedDate), .signedDate)))
    }
}

/// The stored columns of a notification (table `notifications`), in table order; the table also has its
/// `sequence`, numbering the notifications in the order they were stored.
enum NotificationColumn: Int32, StoredColumn {
    case notificationUUID
    case notificationType
    case subtype
    case bundleID
    case signedDate
    case receivedDate
    case customerID
    case transactionID
    case originalTransactionID
    case effects
    case signedPayload

    var name: String {
        switch self {
        case .notificationUUID: "notification_uuid"
        case .notificationType: "notification_type"
        case .subtype: "subtype"
        case .bundleID: "bundle_id"
        case .signedDate: "signed_date_ms"
        case .receivedDate: "received_ms"
        case .customerID: "customer_id"
        case .transactionID: "transaction_id"
        case .originalTransactionID: "original_transaction_id"
        case .effects: "effects"
        case .signedPayload: "signed_payload"
        }
    }

    var isFlag: Bool { false }

    /// The column's value for `notification`: its effects as a JSON array of strings.
    func value(in notification: LedgerNotification) -> LedgerValue {
        switch self {
        case .notificationUUID: .text(notification.notificationUUID)
        case .notificationType: .text(notification.notificationType)
        case .subtype: LedgerValue(notification.subtype)
        case .bundleID: .text(notification.bundleID)
        case .signedDate: .integer(notification.signedDate.millisecondsSince1970)
        case .receivedDate: .integer(notification.receivedDate.millisecondsSince1970)
        case .customerID: LedgerValue(notification.customerID)
        case .transactionID: LedgerValue(notification.transactionID)
        case .originalTransactionID: LedgerValue(notification.originalTransactionID)
        case .effects: .text(Self.encode(effects: notification.effects))
        case .signedPayload: .text(notification.signedPayload)
        }
    }

    /// `effects` as the column keeps them: a JSON array of strings.
    static func encode(effects: [String]) -> String {
        JSONValue.array(effects.map(JSONValue.string)).serialized()
    }

    /// The notification of one stored row, whose columns `text` and `integer` read (nil for NULL).
    static func decode(
        purpose: String, text: (Self) -> String?, integer: (Self) -> Int64?
    ) throws(LedgerError) -> LedgerNotification {
        func required<Value>(_ value: Value?, _ column: Self) throws(LedgerError) -> Value {
            try requiredColumn(value, column.name, purpose: purpose)
        }
        func date(_ column: Self) throws(LedgerError) -> ReceiptDate {
            try ReceiptDate(millisecondsSince1970: required(integer(column), column))
        }
        let stored = try required(text(.effects), .effects)
        let parsed = try? JSONValue(parsing: stored)
        guard case .array(let elements) = parsed else {
            throw LedgerError(.storage, "\(purpose): column effects holds no JSON array")
        }
        let effects = elements.compactMap { element -> String? in
            if case .string(let line) = element { line } else { nil }
        }
        guard effects.count == elements.count else {
            throw LedgerError(.storage, "\(purpose): column effects holds something else than strings")
        }
        return try LedgerNotification(
            notificationUUID: required(text(.notificationUUID), .notificationUUID),
            notificationType: required(text(.notificationType), .notificationType), subtype: text(.subtype),
            bundleID: required(text(.bundleID), .bundleID), signedDate: date(.signedDate),
            receivedDate: date(.receivedDate), customerID: text(.customerID), transactionID: text(.transactionID),
            originalTransactionID: text(.originalTransactionID), effects: effects,
            signedPayload: required(text(.signedPayload), .signedPayload))
    }
}

/// The statements on renewal info and notifications, the same in every store but for how parameters are written.
enum CustomerStateSQL {
    /// Stores the renewal info bound in column order unless one signed as late or later is stored; returns its
    /// columns when it was stored.
    static func upsertRenewalInfo(_ style: ParameterStyle) -> String {
        let updates = RenewalColumn.allCases.dropFirst().map { "\($0.name) = excluded.\($0.name)" }
        return "INSERT INTO renewal_info (\(RenewalColumn.list)) VALUES (\(RenewalColumn.parameters(style))) "
            + "ON CONFLICT (original_transaction_id) DO UPDATE SET \(updates.joined(separator: ", ")) "
            + "WHERE renewal_info.signed_date_ms < excluded.signed_date_ms RETURNING \(RenewalColumn.list)"
    }

    /// Selects the renewal info columns of the rows matching `clause`.
    static func selectRenewalInfo(where clause: String) -> String {
        "SELECT \(RenewalColumn.list) FROM renewal_info WHERE \(clause)"
    }

    /// Stores the notification bound in column order unless its UUID is stored; returns its sequence when stored.
    static func insertNotification(_ style: ParameterStyle) -> String {
        NotificationColumn.insertUnlessStored(into: "notifications", key: "notification_uuid", style)
    }

    /// Selects the notification columns and then the sequence of the rows matching `clause`.
    static func selectNotifications(where clause: String) -> String {
        NotificationColumn.selectWithSequence(from: "notifications", where: clause)
    }

    /// Sets the effects (parameter 1) of the notification with the UUID of parameter 2.
    static func setEffects(_ style: ParameterStyle) -> String {
        "UPDATE notifications SET effects = \(style.parameter(1)) WHERE notification_uuid = \(style.parameter(2))"
    }

    /// Sets the date `column` (parameter 1, NULL to clear it) of the transaction of parameter 2.
    static func setDate(_ column: LedgerColumn, _ style: ParameterStyle) -> String {
        "UPDATE transactions SET \(column.name) = \(style.parameter(1)) WHERE transaction_id = \(style.parameter(2))"
    }

    /// A customer other than the one of parameter 2 (the placeholder) holding a transaction of the original
    /// transaction of parameter 1: the one with the smallest transaction id.
    static func knownCustomer(_ style: ParameterStyle) -> String {
        "SELECT customer_id FROM transactions WHERE original_transaction_id = \(style.parameter(1)) "
            + "AND customer_id <> \(style.parameter(2)) ORDER BY transaction_id LIMIT 1"
    }

    /// Gives every transaction of the customer of parameter 1 to the customer of parameter 2.
    static func reassignCustomer(_ style: ParameterStyle) -> String {
        "UPDATE transactions SET customer_id = \(style.parameter(2)) WHERE customer_id = \(style.parameter(1))"
    }

    /// The notifications of the app of parameter 1 received at or after parameter 2, with a sequence below
    /// parameter 3, newest first, at most parameter 4 of them.
    static func notificationPage(_ style: ParameterStyle) -> String {
        selectNotifications(
            where: "bundle_id = \(style.parameter(1)) AND received_ms >= \(style.parameter(2)) "
                + "AND sequence < \(style.parameter(3)) ORDER BY sequence DESC LIMIT \(style.parameter(4))")
    }

    /// The parameters of ``notificationPage(_:)`` for one page: one row more than `limit`, to tell whether there is
    /// a next page.
    static func notificationPageParameters(
        bundleID: String, since: ReceiptDate?, before: Int64?, limit: Int
    ) -> [LedgerValue] {
        [
            .text(bundleID), .integer(since?.millisecondsSince1970 ?? Int64.min), .integer(before ?? Int64.max),
            .integer(Int64(max(limit, 0)) + 1),
        ]
    }

    /// The page of at most `limit` of `rows` (newest first, with their sequences; one more than `limit` when there
    /// is a next page).
    static func page(_ rows: [(sequence: Int64, notification: LedgerNotification)], limit: Int)
        -> LedgerNotificationPage
    {
        let (kept, next) = pageOf(rows, limit: limit)
        return LedgerNotificationPage(notifications: kept, next: next)
    }

    /// The first `limit` of `rows` (in the order listed, with their sequences; one more than `limit` when there is
    /// a next page), and the cursor of the next page: the sequence of the last row kept, nil when none is left.
    static func pageOf<Row>(_ rows: [(sequence: Int64, notification: Row)], limit: Int) -> ([Row], next: Int64?) {
        let kept = Array(rows.prefix(max(limit, 0)))
        return (kept.map(\.notification), rows.count > kept.count ? kept.last?.sequence : nil)
    }
}

extension LedgerValue {
    /// `values`, each tagged with its kind and length: equal bytes for equal values (strings compared byte for
    /// byte), whichever store holds them.
    static func canonicalBytes(_ values: [LedgerValue]) -> [UInt8] {
        var bytes: [UInt8] = []
        for value in values {
            switch value {
            case .null: bytes.append(0)
            case .integer(let value):
                bytes.append(1)
                bytes += bigEndian(UInt64(bitPattern: value))
            case .text(let text):
                bytes.append(2)
                bytes += bigEndian(UInt64(text.utf8.count))
                bytes.append(contentsOf: text.utf8)
            }
        }
        return bytes
    }
}

/// The 8 bytes of `value`, most significant first.
private func bigEndian(_ value: UInt64) -> [UInt8] {
    stride(from: 56, through: 0, by: -8).map { UInt8(truncatingIfNeeded: value >> UInt64($0)) }
}

extension LedgerRenewalInfo {
    /// Every stored field, each tagged with its kind and length, in column order: equal bytes for equal stored
    /// renewal infos, whichever store holds them. For digests of a whole ledger.
    public var canonicalBytes: [UInt8] {
        LedgerValue.canonicalBytes(RenewalColumn.allCases.map { $0.value(in: self) })
    }
}

extension LedgerNotification {
    /// Every stored field (effects included, the store's sequence number not), each tagged with its kind and
    /// length, in column order: equal bytes for equal stored notifications, whichever store holds them. For
    /// digests of a whole ledger.
    public var canonicalBytes: [UInt8] {
        LedgerValue.canonicalBytes(NotificationColumn.allCases.map { $0.value(in: self) })
    }
}
