import StrictJSON
import ZoneInfo

/// A JSON document that does not describe a receipt: the key path (`in_app[2].purchase_date`, empty for the
/// document) and what is wrong with it.
public typealias ReceiptJSONError = JSONFieldError

extension Receipt {
    /// The keys ``init(json:extraKeys:)`` reads.
    static let jsonKeys = Set([
        "receipt_type", "adam_id", "app_item_id", "bundle_id", "application_version", "download_id",
        "original_application_version", "version_external_identifier", "in_app",
    ]).union(dateKeys("receipt_creation_date", "original_purchase_date", "expiration_date"))

    /// The receipt in verifyReceipt's vocabulary, key order and string conventions: dates as
    /// `2024-06-05 12:00:00 Etc/GMT` with `_ms` twins as strings; `app_item_id` (repeated as `adam_id`, as Apple
    /// does), `download_id` and `version_external_identifier` as numbers; `in_app` always present. Absent fields
    /// are omitted.
    public var verifyReceiptJSON: JSONObject { verifyReceiptJSON(pacificTime: nil) }

    /// ``verifyReceiptJSON`` as Apple's verifyReceipt answer writes it: with `pacificTime`, every date also gets
    /// its `_pst` twin in that zone's local time (Apple's is America/Los_Angeles, with its daylight-saving rules);
    /// with `requestDate`, the `request_date` trio follows `receipt_creation_date`'s, as in Apple's answer.
    public func verifyReceiptJSON(pacificTime zone: TimeZoneRules?, requestDate: ReceiptDate? = nil) -> JSONObject {
        JSONObject { addVerifyReceiptJSON(to: &$0, pacificTime: zone, requestDate: requestDate) }
    }

    /// Adds the members of ``verifyReceiptJSON(pacificTime:requestDate:)`` to `object`, in the same order: how its
    /// text is written without building the object.
    public func addVerifyReceiptJSON<Object: JSONObjectBuilder>(
        to object: inout Object, pacificTime zone: TimeZoneRules?, requestDate: ReceiptDate? = nil
    ) {
        object.add(Keys.receiptType, string: receiptType)
        object.add(Keys.adamID, integer: appItemID)
        object.add(Keys.appItemID, integer: appItemID)
        object.add(Keys.bundleID, string: bundleID)
        object.add(Keys.applicationVersion, string: applicationVersion)
        object.add(Keys.downloadID, integer: downloadID)
        object.add(Keys.versionExternalIdentifier, integer: versionExternalIdentifier)
        object.addDate(.receiptCreation, creationDate, zone)
        object.addDate(.request, requestDate, zone)
        object.addDate(.originalPurchase, originalPurchaseDate, zone)
        object.add(Keys.originalApplicationVersion, string: originalApplicationVersion)
        object.addDate(.expiration, expirationDate, zone)
        object.addObjects(Keys.inApp, count: inAppPurchases.count) { index, entry in
            inAppPurchases[index].addVerifyReceiptJSON(to: &entry, pacificTime: zone)
        }
    }

    /// Reads a receipt from the same vocabulary, as a person or a program writes it: dates as RFC 3339 or
    /// verifyReceipt's form, or as `_ms` (a number or a string; when both are given they must agree); integers
    /// as numbers or strings of digits; flags as `true`/`false` or their strings; `adam_id`, when given with
    /// `app_item_id`, must repeat it. `bundle_id` and
    /// `receipt_creation_date` are required, as are `product_id`, `transaction_id` and `purchase_date` in each
    /// purchase; `quantity` defaults to 1. Any other key is an error, except those in `extraKeys`, which the
    /// caller reads itself.
    public init(json: JSONValue, extraKeys: Set<String> = []) throws(ReceiptJSONError) {
        let reader = try JSONObjectReader(json)
        try reader.rejectUnknownKeys(allowed: extraKeys.isEmpty ? Self.jsonKeys : Self.jsonKeys.union(extraKeys))
        guard let creationDate = try reader.date("receipt_creation_date") else {
            throw ReceiptJSONError(path: "receipt_creation_date", rule: "is required")
        }
        let appItemID = try reader.lenientInteger("app_item_id")
        let adamID = try reader.lenientInteger("adam_id")
        if let appItemID, let adamID, appItemID != adamID {
            throw ReceiptJSONError(path: "adam_id", rule: "disagrees with app_item_id (Apple repeats the same value)")
        }
        self.init(
            bundleID: try reader.requiredString("bundle_id"),
            creationDate: creationDate,
            receiptType: try reader.string("receipt_type"),
            appItemID: appItemID ?? adamID,
            applicationVersion: try reader.string("application_version"),
            originalApplicationVersion: try reader.string("original_application_version"),
            originalPurchaseDate: try reader.date("original_purchase_date"),
            expirationDate: try reader.date("expiration_date"),
            versionExternalIdentifier: try reader.lenientInteger("version_external_identifier"),
            downloadID: try reader.lenientInteger("download_id"),
            inAppPurchases: try (reader.array("in_app") ?? []).enumerated().map {
                (index, element) throws(ReceiptJSONError) in
                try InAppPurchase(json: element, path: "in_app[\(index)]")
            }
        )
    }
}

extension InAppPurchase {
    /// The keys ``init(json:path:extraKeys:)`` reads.
    static let jsonKeys = Set([
        "quantity", "product_id", "transaction_id", "original_transaction_id", "web_order_line_item_id",
        "is_trial_period", "is_in_intro_offer_period", "promotional_offer_id",
    ]).union(dateKeys("purchase_date", "original_purchase_date", "expires_date", "cancellation_date"))

    /// This purchase in verifyReceipt's vocabulary (see ``Receipt/verifyReceiptJSON``).
    public var verifyReceiptJSON: JSONObject { verifyReceiptJSON(pacificTime: nil) }

    /// This purchase as Apple's verifyReceipt answer writes it: with `pacificTime`, every date with its `_pst`
    /// twin (see ``Receipt/verifyReceiptJSON(pacificTime:requestDate:)``).
    public func verifyReceiptJSON(pacificTime zone: TimeZoneRules?) -> JSONObject {
        JSONObject { addVerifyReceiptJSON(to: &$0, pacificTime: zone) }
    }

    /// Adds the members of ``verifyReceiptJSON(pacificTime:)`` to `object`, in the same order.
    public func addVerifyReceiptJSON<Object: JSONObjectBuilder>(
        to object: inout Object, pacificTime zone: TimeZoneRules?
    ) {
        object.addDecimalString(Keys.quantity, quantity)
        object.add(Keys.productID, string: productID)
        object.add(Keys.transactionID, string: transactionID)
        object.add(Keys.originalTransactionID, string: originalTransactionID)
        object.addDate(.purchase, purchaseDate, zone)
        object.addDate(.originalPurchase, originalPurchaseDate, zone)
        object.addDate(.expires, expiresDate, zone)
        object.addDate(.cancellation, cancellationDate, zone)
        object.addDecimalString(Keys.webOrderLineItemID, webOrderLineItemID)
        object.add(Keys.isTrialPeriod, string: isTrialPeriod.map { String($0) })
        object.add(Keys.isInIntroOfferPeriod, string: isInIntroOfferPeriod.map { String($0) })
        object.add(Keys.promotionalOfferID, string: promotionalOfferID)
    }

    /// Reads one purchase from the same vocabulary, with the same leniency as ``Receipt/init(json:extraKeys:)``;
    /// errors name keys under `path`. Any other key is an error, except those in `extraKeys`.
    public init(json: JSONValue, path: String = "", extraKeys: Set<String> = []) throws(ReceiptJSONError) {
        let reader = try JSONObjectReader(json, path: path)
        try reader.rejectUnknownKeys(allowed: extraKeys.isEmpty ? Self.jsonKeys : Self.jsonKeys.union(extraKeys))
        guard let purchaseDate = try reader.date("purchase_date") else {
            throw reader.error("purchase_date", "is required")
        }
        self.init(
            productID: try reader.requiredString("product_id"),
            transactionID: try reader.requiredString("transaction_id"),
            purchaseDate: purchaseDate,
            quantity: try reader.lenientInteger("quantity", minimum: 0) ?? 1,
            originalTransactionID: try reader.string("original_transaction_id"),
            originalPurchaseDate: try reader.date("original_purchase_date"),
            expiresDate: try reader.date("expires_date"),
            webOrderLineItemID: try reader.lenientInteger("web_order_line_item_id"),
            cancellationDate: try reader.date("cancellation_date"),
            isTrialPeriod: try reader.flag("is_trial_period"),
            isInIntroOfferPeriod: try reader.flag("is_in_intro_offer_period"),
            promotionalOfferID: try reader.string("promotional_offer_id")
        )
    }
}

private func dateKeys(_ names: String...) -> Set<String> {
    Set(names.flatMap { [$0, $0 + "_ms"] })
}

/// The keys of verifyReceipt's members other than dates, made once (``JSONKey``).
private enum Keys {
    static let receiptType = JSONKey("receipt_type")
    static let adamID = JSONKey("adam_id")
    static let appItemID = JSONKey("app_item_id")
    static let bundleID = JSONKey("bundle_id")
    static let applicationVersion = JSONKey("application_version")
    static let downloadID = JSONKey("download_id")
    static let versionExternalIdentifier = JSONKey("version_external_identifier")
    static let originalApplicationVersion = JSONKey("original_application_version")
    static let inApp = JSONKey("in_app")
    static let quantity = JSONKey("quantity")
    static let productID = JSONKey("product_id")
    static let transactionID = JSONKey("transaction_id")
    static let originalTransactionID = JSONKey("original_transaction_id")
    static let webOrderLineItemID = JSONKey("web_order_line_item_id")
    static let isTrialPeriod = JSONKey("is_trial_period")
    static let isInIntroOfferPeriod = JSONKey("is_in_intro_offer_period")
    static let promotionalOfferID = JSONKey("promotional_offer_id")
}

/// A date's keys in verifyReceipt's vocabulary (`key`, `key_ms`, `key_pst`), made once rather than per answer.
private struct DateKeys {
    let text: JSONKey
    let milliseconds: JSONKey
    let pacific: JSONKey

    init(text: StaticString, milliseconds: StaticString, pacific: StaticString) {
        self.text = JSONKey(text)
        self.milliseconds = JSONKey(milliseconds)
        self.pacific = JSONKey(pacific)
    }

    init(_ key: String) {
        text = JSONKey(string: key)
        milliseconds = JSONKey(string: key + "_ms")
        pacific = JSONKey(string: key + "_pst")
    }

    static let receiptCreation = DateKeys(
        text: "receipt_creation_date", milliseconds: "receipt_creation_date_ms", pacific: "receipt_creation_date_pst")
    static let request = DateKeys(text: "request_date", milliseconds: "request_date_ms", pacific: "request_date_pst")
    static let originalPurchase = DateKeys(
        text: "original_purchase_date", milliseconds: "original_purchase_date_ms", pacific: "original_purchase_date_pst"
    )
    static let expiration = DateKeys(
        text: "expiration_date", milliseconds: "expiration_date_ms", pacific: "expiration_date_pst")
    static let purchase = DateKeys(
        text: "purchase_date", milliseconds: "purchase_date_ms", pacific: "purchase_date_pst")
    static let expires = DateKeys(text: "expires_date", milliseconds: "expires_date_ms", pacific: "expires_date_pst")
    static let cancellation = DateKeys(
        text: "cancellation_date", milliseconds: "cancellation_date_ms", pacific: "cancellation_date_pst")
}

extension JSONObjectBuilder {
    /// A date's members: its text in verifyReceipt's form, its `_ms` twin as a string and, with `zone`, its `_pst`
    /// twin; nothing when `date` is nil.
    fileprivate mutating func addDate(_ keys: DateKeys, _ date: ReceiptDate?, _ zone: TimeZoneRules?) {
        guard let date else { return }
        addAppleText(keys.text, date.civilTime(), zone: "Etc/GMT")
        addDecimalString(keys.milliseconds, date.millisecondsSince1970)
        if let zone { addAppleText(keys.pacific, date.civilTime(in: zone), zone: zone.name) }
    }

    /// `value`'s decimal text as a string member, as verifyReceipt writes its numbers (`"quantity":"1"`); nothing
    /// when `value` is nil.
    fileprivate mutating func addDecimalString(_ key: JSONKey, _ value: Int64?) {
        guard let value else { return }
        add(key, asciiCount: value.decimalCount) { value.appendDecimal(to: &$0) }
    }

    /// A date as verifyReceipt writes it under `key`: its text (`2024-06-05 12:00:00 Etc/GMT`), `key_ms` as a
    /// string and, with `pacificTime`, `key_pst`; nothing when `date` is nil.
    public mutating func addVerifyReceiptDate(_ key: String, _ date: ReceiptDate?, pacificTime: TimeZoneRules?) {
        guard date != nil else { return }
        addDate(DateKeys(key), date, pacificTime)
    }

    /// `date` in RFC 3339 (``ReceiptDate/rfc3339``) as a string member, written straight into the builder.
    public mutating func add(_ key: JSONKey, rfc3339 date: ReceiptDate) {
        add(key, asciiCount: date.rfc3339ByteCount) { date.appendRFC3339(to: &$0) }
    }

    /// `civil` in verifyReceipt's form, written straight into the builder for the years of receipts.
    private mutating func addAppleText(_ key: JSONKey, _ civil: CivilTime, zone: String) {
        guard let count = civil.appleTextCount(zone: zone) else { return add(key, string: civil.appleText(zone: zone)) }
        add(key, asciiCount: count) { civil.appendAppleText(zone: zone, to: &$0) }
    }
}

/// verifyReceipt's leniency: integers and flags also as strings, dates as text and/or `_ms`.
extension JSONObjectReader {
    /// An integer given as a number or as a string of digits.
    fileprivate func lenientInteger(_ key: String, minimum: Int64 = .min) throws(ReceiptJSONError) -> Int64? {
        guard let value = value(key) else { return nil }
        let text: String
        switch value {
        case .number(let literal): text = literal
        case .string(let literal): text = literal
        default: throw error(key, "must be an integer, found \(value.kindName)")
        }
        let digits = text.hasPrefix("-") ? text.dropFirst() : text[...]
        guard !digits.isEmpty, digits.allSatisfy({ $0.isASCII && $0.isNumber }), let integer = Int64(text),
            integer >= minimum
        else {
            let range = minimum == 0 ? "a non-negative 64-bit integer" : "a 64-bit integer"
            throw error(key, "must be \(range), found \(text)")
        }
        return integer
    }

    /// A flag given as `true`/`false` or as their strings.
    fileprivate func flag(_ key: String) throws(ReceiptJSONError) -> Bool? {
        guard let value = value(key) else { return nil }
        switch value {
        case .bool(let flag): return flag
        case .string("true"): return true
        case .string("false"): return false
        default: throw error(key, "must be true or false")
        }
    }

    /// A date given as `key` (RFC 3339 or verifyReceipt's form; empty means absent) and/or `key_ms` (a number or a
    /// string of digits, within years 0000-9999); when both are given they must agree. Errors name the key.
    public func date(_ key: String) throws(ReceiptJSONError) -> ReceiptDate? {
        var fromText: ReceiptDate?
        if let text = try string(key), !text.isEmpty {
            guard let date = ReceiptDate(rfc3339: text) ?? ReceiptDate(appleFormat: text) else {
                throw error(key, "\"\(text)\" is not a date (use RFC 3339 such as 2024-06-05T12:00:00Z)")
            }
            fromText = date
        }
        var fromMilliseconds: ReceiptDate?
        if let milliseconds = try lenientInteger(key + "_ms") {
            let date = ReceiptDate(millisecondsSince1970: milliseconds)
            guard date >= .earliest && date <= .latest else {
                throw error(key + "_ms", "is outside years 0000-9999")
            }
            fromMilliseconds = date
        }
        guard let fromText, let fromMilliseconds else { return fromText ?? fromMilliseconds }
        let sameInstant = fromText == fromMilliseconds
        let sameSecond =
            fromText.millisecondsSince1970 % 1000 == 0 && fromText.secondsSince1970 == fromMilliseconds.secondsSince1970
        guard sameInstant || sameSecond else {
            throw error(key, "disagrees with \(key)_ms")
        }
        return fromMilliseconds
    }
}
