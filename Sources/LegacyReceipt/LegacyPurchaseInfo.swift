import PropertyList
import ReceiptModel
import StrictJSON

/// The signed part of a legacy transaction receipt: the `purchase-info` property list, a dictionary of strings.
///
/// Documented keys are typed (and checked when present); every key and value is also kept as signed, in order, in
/// ``fields``. The parser requires none of the keys, so that a receipt can be read to find its transaction id even
/// when it cannot be verified; ``LegacyReceiptVerifier`` requires the ones a purchase cannot lack.
public struct LegacyPurchaseInfo: Hashable, Sendable {
    /// Every key and value as signed, in order. All values are strings.
    public let fields: PropertyListDictionary

    /// `bid`: the app's bundle identifier.
    public let bundleID: String?
    /// `bvrs`: the app's bundle version when it bought.
    public let bundleVersion: String?
    /// `product-id`.
    public let productID: String?
    /// `transaction-id`: decimal digits.
    public let transactionID: String?
    /// `original-transaction-id`: decimal digits.
    public let originalTransactionID: String?
    /// `purchase-date-ms`, or `purchase-date` (`2012-12-02 07:15:54 Etc/GMT`) when there is no `-ms` twin.
    public let purchaseDate: ReceiptDate?
    /// `original-purchase-date-ms`, or `original-purchase-date` when there is no `-ms` twin.
    public let originalPurchaseDate: ReceiptDate?
    /// `expires-date` (auto-renewable subscriptions): milliseconds since 1970 in the receipts Apple issued, or
    /// verifyReceipt's text form.
    public let expiresDate: ReceiptDate?
    /// `quantity`: a positive count.
    public let quantity: Int64?
    /// `item-id`: the in-app product's Apple ID.
    public let itemID: Int64?
    /// `app-item-id`: the app's Apple ID (absent in sandbox).
    public let appItemID: Int64?
    /// `version-external-identifier`: the app version's Apple ID (absent in sandbox).
    public let versionExternalIdentifier: Int64?
    /// `unique-identifier`: the device's identifier as iOS 6 reported it (a UDID-like hex string).
    public let uniqueIdentifier: String?
    /// `unique-vendor-identifier`: `identifierForVendor` (iOS 6 and later).
    public let uniqueVendorIdentifier: String?
    /// `web-order-line-item-id` (auto-renewable subscriptions).
    public let webOrderLineItemID: Int64?
    /// `is-trial-period`: "true" or "false".
    public let isTrialPeriod: Bool?
    /// `is-in-intro-offer-period`: "true" or "false".
    public let isInIntroOfferPeriod: Bool?

    /// Reads the decoded `purchase-info` property list.
    public init(propertyList bytes: [UInt8], maximumSize: Int) throws(LegacyReceiptError) {
        let value = try LegacyTransactionReceipt.parsePropertyList(
            bytes, maximumSize: maximumSize, what: "purchase-info")
        guard case .dictionary(let fields) = value else {
            throw LegacyReceiptError(.invalidField, "purchase-info is \(value.kindName), not a dictionary")
        }
        try self.init(fields: fields)
    }

    /// Types the documented keys of `fields`, which must all hold strings.
    public init(fields: PropertyListDictionary) throws(LegacyReceiptError) {
        var strings: [String: String] = [:]
        var jsonKeys: [String: String] = [:]
        for entry in fields {
            guard case .string(let text) = entry.value else {
                throw LegacyReceiptError(
                    .invalidField, "purchase-info \"\(entry.key)\" is \(entry.value.kindName); every value is a string")
            }
            let jsonKey = Self.jsonKey(entry.key)
            if let other = jsonKeys[jsonKey] {
                throw LegacyReceiptError(
                    .invalidField,
                    "purchase-info keys \"\(other)\" and \"\(entry.key)\" are both \"\(jsonKey)\" in JSON")
            }
            jsonKeys[jsonKey] = entry.key
            strings[entry.key] = text
        }
        let reader = FieldReader(strings: strings)
        self.fields = fields
        bundleID = try reader.nonEmpty("bid")
        bundleVersion = strings["bvrs"]
        productID = try reader.nonEmpty("product-id")
        transactionID = try reader.digits("transaction-id")
        originalTransactionID = try reader.digits("original-transaction-id")
        purchaseDate = try reader.date(milliseconds: "purchase-date-ms", text: "purchase-date")
        originalPurchaseDate = try reader.date(
            milliseconds: "original-purchase-date-ms", text: "original-purchase-date")
        expiresDate = try reader.date(millisecondsOrText: "expires-date")
        quantity = try reader.integer("quantity", minimum: 1)
        itemID = try reader.integer("item-id")
        appItemID = try reader.integer("app-item-id")
        versionExternalIdentifier = try reader.integer("version-external-identifier")
        uniqueIdentifier = strings["unique-identifier"]
        uniqueVendorIdentifier = strings["unique-vendor-identifier"]
        webOrderLineItemID = try reader.integer("web-order-line-item-id")
        isTrialPeriod = try reader.boolean("is-trial-period")
        isInIntroOfferPeriod = try reader.boolean("is-in-intro-offer-period")
    }

    /// The raw string for `key`.
    public func string(_ key: String) -> String? { fields[key]?.stringValue }

    /// The purchase info as Apple's iOS 6 verifyReceipt returned it in `receipt`: every key with `-` turned into
    /// `_`, every value the string that was signed, in the signed order.
    public var verifyReceiptJSON: JSONObject {
        var object = JSONObject()
        for entry in fields {
            if case .string(let text) = entry.value { object[Self.jsonKey(entry.key)] = .string(text) }
        }
        return object
    }

    static func jsonKey(_ key: String) -> String {
        String(String.UnicodeScalarView(key.unicodeScalars.map { $0 == "-" ? "_" : $0 }))
    }

    /// Checks that the keys every purchase has are present: what was bought, by which app, when, how many times.
    func requireFieldsOfAPurchase() throws(LegacyReceiptError) {
        let required: [(String, Bool)] = [
            ("bid", bundleID != nil), ("product-id", productID != nil), ("transaction-id", transactionID != nil),
            ("quantity", quantity != nil), ("purchase-date-ms", purchaseDate != nil),
        ]
        for (key, present) in required where !present {
            throw LegacyReceiptError(.missingField, "purchase-info has no \"\(key)\"; every purchase has one")
        }
    }
}

/// Reads typed values from purchase-info strings, naming the key and the rule when one does not fit.
private struct FieldReader {
    let strings: [String: String]

    func nonEmpty(_ key: String) throws(LegacyReceiptError) -> String? {
        guard let text = strings[key] else { return nil }
        guard !text.isEmpty else { throw LegacyReceiptError(.invalidField, "purchase-info \"\(key)\" is empty") }
        return text
    }

    func digits(_ key: String) throws(LegacyReceiptError) -> String? {
        guard let text = strings[key] else { return nil }
        guard !text.isEmpty, text.utf8.allSatisfy(Self.isDigit) else {
            throw LegacyReceiptError(.invalidField, "purchase-info \"\(key)\" is \"\(text)\", not decimal digits")
        }
        return text
    }

    func integer(_ key: String, minimum: Int64 = 0) throws(LegacyReceiptError) -> Int64? {
        guard let text = strings[key] else { return nil }
        guard let value = Self.unsigned(text), value >= minimum else {
            throw LegacyReceiptError(
                .invalidField, "purchase-info \"\(key)\" is \"\(text)\", not a whole number of at least \(minimum)")
        }
        return value
    }

    func boolean(_ key: String) throws(LegacyReceiptError) -> Bool? {
        switch strings[key] {
        case nil: return nil
        case "true": return true
        case "false": return false
        case let text?:
            throw LegacyReceiptError(
                .invalidField, "purchase-info \"\(key)\" is \"\(text)\", not \"true\" or \"false\"")
        }
    }

    /// The `-ms` key when present, else the text key in verifyReceipt's form.
    func date(milliseconds msKey: String, text textKey: String) throws(LegacyReceiptError) -> ReceiptDate? {
        if let text = strings[msKey] {
            guard let date = Self.milliseconds(text) else {
                throw LegacyReceiptError(
                    .invalidField, "purchase-info \"\(msKey)\" is \"\(text)\", not milliseconds since 1970")
            }
            return date
        }
        guard let text = strings[textKey] else { return nil }
        guard let date = ReceiptDate(appleFormat: text) else {
            throw LegacyReceiptError(
                .invalidField,
                "purchase-info \"\(textKey)\" is \"\(text)\", not a date like 2012-12-02 07:15:54 Etc/GMT")
        }
        return date
    }

    /// Milliseconds since 1970, or verifyReceipt's text form.
    func date(millisecondsOrText key: String) throws(LegacyReceiptError) -> ReceiptDate? {
        guard let text = strings[key] else { return nil }
        guard let date = Self.milliseconds(text) ?? ReceiptDate(appleFormat: text) else {
            throw LegacyReceiptError(
                .invalidField, "purchase-info \"\(key)\" is \"\(text)\", neither milliseconds since 1970 nor a date")
        }
        return date
    }

    private static func isDigit(_ byte: UInt8) -> Bool { (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(byte) }

    /// Decimal digits only (no sign, no spaces) that fit in an Int64.
    static func unsigned(_ text: String) -> Int64? {
        guard !text.isEmpty, text.utf8.count <= 19 else { return nil }
        var value: Int64 = 0
        for byte in text.utf8 {
            guard isDigit(byte) else { return nil }
            let (shifted, overflow) = value.multipliedReportingOverflow(by: 10)
            let (sum, sumOverflow) = shifted.addingReportingOverflow(Int64(byte - UInt8(ascii: "0")))
            guard !overflow, !sumOverflow else { return nil }
            value = sum
        }
        return value
    }

    static func milliseconds(_ text: String) -> ReceiptDate? {
        guard let value = unsigned(text), value <= ReceiptDate.latest.millisecondsSince1970 else { return nil }
        return ReceiptDate(millisecondsSince1970: value)
    }
}

extension LegacyPurchaseInfo {
    /// This purchase as an app receipt's in-app purchase, for rules written against receipts (entitlements).
    /// Throws when a field every purchase has is missing.
    public func inAppPurchase() throws(LegacyReceiptError) -> InAppPurchase {
        guard let transactionID, let productID, let purchaseDate else {
            throw LegacyReceiptError(
                .missingField, "purchase-info needs transaction-id, product-id and purchase-date to count as a purchase"
            )
        }
        return InAppPurchase(
            productID: productID, transactionID: transactionID, purchaseDate: purchaseDate, quantity: quantity ?? 1,
            originalTransactionID: originalTransactionID, originalPurchaseDate: originalPurchaseDate,
            expiresDate: expiresDate, webOrderLineItemID: webOrderLineItemID, isTrialPeriod: isTrialPeriod,
            isInIntroOfferPeriod: isInIntroOfferPeriod)
    }
}
