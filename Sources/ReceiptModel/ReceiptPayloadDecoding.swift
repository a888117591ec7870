import ReceiptDER

extension Receipt {
    /// Decodes a receipt payload: a strict DER `SET OF ReceiptAttribute` filling `payload` exactly.
    ///
    /// Attribute order is free (Apple does not sort). Documented fields must carry their documented encoding in
    /// strict DER with nothing trailing; each may appear once, except in-app purchases; `bundle_id`,
    /// `receipt_creation_date` and, in each purchase, `product_id`, `transaction_id` and `purchase_date` are
    /// required. Undocumented attributes are kept raw.
    public init(payload: ArraySlice<UInt8>, maximumPurchases: Int = .max) throws(ReceiptPayloadError) {
        // The purchase limit holds before any purchase is decoded: a first pass only reads attribute types.
        var purchaseCount = 0
        try forEachAttribute(in: payload, location: nil) { (attribute) throws(ReceiptPayloadError) in
            guard attribute.type == ReceiptField.inAppPurchase.rawValue else { return }
            purchaseCount += 1
            guard purchaseCount <= maximumPurchases else {
                throw ReceiptPayloadError(.tooManyPurchases(limit: maximumPurchases), at: nil)
            }
        }
        var fields = FieldValues<ReceiptField>()
        var purchases: [InAppPurchase] = []
        purchases.reserveCapacity(purchaseCount)
        var unknown: [ReceiptAttribute] = []
        try forEachAttribute(in: payload, location: nil) { (attribute) throws(ReceiptPayloadError) in
            guard let field = ReceiptField(rawValue: attribute.type) else {
                unknown.append(
                    ReceiptAttribute(type: attribute.type, version: attribute.version, value: Array(attribute.value)))
                return
            }
            if field == .inAppPurchase {
                let location = "in_app[\(purchases.count)]"
                purchases.append(try InAppPurchase(payload: attribute.value, location: location))
                return
            }
            let location = "\(field.name) (field \(field.rawValue))"
            try fields.store(field, try DecodedValue(attribute.value, as: field.valueKind, at: location), at: location)
        }
        bundleID = try fields.required(.bundleID, at: "bundle_id (field 2)") { $0.string() }
        creationDate = try fields.required(.creationDate, at: "receipt_creation_date (field 12)") { $0.date() }
        receiptType = fields[.receiptType]?.string()
        appItemID = fields[.appItemID]?.integer()
        applicationVersion = fields[.applicationVersion]?.string()
        opaqueValue = fields[.opaqueValue]?.octets()
        sha1Hash = fields[.sha1Hash]?.octets()
        versionExternalIdentifier = fields[.versionExternalIdentifier]?.integer()
        originalPurchaseDate = fields[.originalPurchaseDate]?.date()
        originalApplicationVersion = fields[.originalApplicationVersion]?.string()
        expirationDate = fields[.expirationDate]?.date()
        inAppPurchases = purchases
        unknownAttributes = unknown
    }
}

extension InAppPurchase {
    init(payload: ArraySlice<UInt8>, location: String) throws(ReceiptPayloadError) {
        var fields = FieldValues<InAppPurchaseField>()
        var unknown: [ReceiptAttribute] = []
        try forEachAttribute(in: payload, location: location) { (attribute) throws(ReceiptPayloadError) in
            guard let field = InAppPurchaseField(rawValue: attribute.type) else {
                unknown.append(
                    ReceiptAttribute(type: attribute.type, version: attribute.version, value: Array(attribute.value)))
                return
            }
            let fieldLocation = "\(location).\(field.name) (field \(field.rawValue))"
            try fields.store(
                field, try DecodedValue(attribute.value, as: field.valueKind, at: fieldLocation), at: fieldLocation)
        }
        func name(_ field: InAppPurchaseField) -> String { "\(location).\(field.name) (field \(field.rawValue))" }
        productID = try fields.required(.productID, at: name(.productID)) { $0.string() }
        transactionID = try fields.required(.transactionID, at: name(.transactionID)) { $0.string() }
        purchaseDate = try fields.required(.purchaseDate, at: name(.purchaseDate)) { $0.date() }
        quantity = fields[.quantity]?.integer()
        originalTransactionID = fields[.originalTransactionID]?.string()
        originalPurchaseDate = fields[.originalPurchaseDate]?.date()
        productType = fields[.productType]?.integer()
        expiresDate = fields[.expiresDate]?.date()
        webOrderLineItemID = fields[.webOrderLineItemID]?.integer()
        cancellationDate = fields[.cancellationDate]?.date()
        isTrialPeriod = fields[.isTrialPeriod]?.flag()
        isInIntroOfferPeriod = fields[.isInIntroOfferPeriod]?.flag()
        promotionalOfferID = fields[.promotionalOfferID]?.string()
        unknownAttributes = unknown
    }
}

/// One `ReceiptAttribute` as read, its value still encoded.
private struct EncodedAttribute {
    let type: Int64
    let version: Int64
    let value: ArraySlice<UInt8>
}

/// Walks a strict DER `SET OF ReceiptAttribute` that fills `payload`.
private func forEachAttribute(
    in payload: ArraySlice<UInt8>,
    location: String?,
    _ body: (EncodedAttribute) throws(ReceiptPayloadError) -> Void
) throws(ReceiptPayloadError) {
    var attributes: ASN1Reader
    do {
        var outer = ASN1Reader(payload, rules: .der)
        attributes = try outer.readSet()
        try outer.finish()
    } catch {
        throw ReceiptPayloadError(.malformed(error), at: location)
    }
    while !attributes.isAtEnd {
        let attribute: EncodedAttribute
        do {
            var sequence = try attributes.readSequence()
            let type: Int64 = try sequence.readInteger()
            let version: Int64 = try sequence.readInteger()
            let value = try sequence.readOctetString()
            try sequence.finish()
            attribute = EncodedAttribute(type: type, version: version, value: value)
        } catch {
            throw ReceiptPayloadError(.malformed(error), at: location)
        }
        try body(attribute)
    }
}

/// The documented fields seen so far, each at most once.
private struct FieldValues<Field: Hashable> {
    private var values: [Field: DecodedValue] = [:]

    subscript(field: Field) -> DecodedValue? {
        guard let value = values[field], value != .absentDate else { return nil }
        return value
    }

    mutating func store(_ field: Field, _ value: DecodedValue, at location: String) throws(ReceiptPayloadError) {
        guard values.updateValue(value, forKey: field) == nil else {
            throw ReceiptPayloadError(.duplicateAttribute, at: location)
        }
    }

    /// The value of a field every receipt must have; an empty date counts as absent.
    func required<Value>(
        _ field: Field,
        at location: String,
        _ extract: (DecodedValue) -> Value?
    ) throws(ReceiptPayloadError) -> Value {
        guard let value = self[field].flatMap(extract) else {
            throw ReceiptPayloadError(.missingAttribute, at: location)
        }
        return value
    }
}

/// A field value decoded from its octets according to its ``ValueKind``.
private enum DecodedValue: Hashable {
    case string(String)
    case integer(Int64)
    case flag(Bool)
    case date(ReceiptDate)
    /// An empty date string: the field is present (for duplicate detection) but carries no date.
    case absentDate
    case octets([UInt8])

    init(_ octets: ArraySlice<UInt8>, as kind: ValueKind, at location: String) throws(ReceiptPayloadError) {
        switch kind {
        case .octets:
            self = .octets(Array(octets))
        case .sha1Digest:
            guard octets.count == 20 else {
                throw ReceiptPayloadError(
                    .invalidValue("must be 20 bytes (a SHA-1 digest), found \(octets.count)"), at: location)
            }
            self = .octets(Array(octets))
        case .purchase:
            throw ReceiptPayloadError(.invalidValue("is not a scalar field"), at: location)
        case .utf8String:
            let node = try Self.element(octets, .utf8String, at: location)
            do {
                self = .string(try node.utf8String())
            } catch {
                throw ReceiptPayloadError(.invalidValue("UTF8String is not valid UTF-8"), at: location)
            }
        case .integer, .nonNegativeInteger, .flag:
            let node = try Self.element(octets, .integer, at: location)
            let value: Int64
            do {
                value = try node.integerValue()
            } catch {
                throw ReceiptPayloadError(
                    .invalidValue("INTEGER is not minimally encoded or exceeds 64 bits"), at: location)
            }
            if kind == .nonNegativeInteger && value < 0 {
                throw ReceiptPayloadError(.invalidValue("must not be negative, found \(value)"), at: location)
            }
            if kind == .flag {
                guard value == 0 || value == 1 else {
                    throw ReceiptPayloadError(.invalidValue("must be 0 or 1, found \(value)"), at: location)
                }
                self = .flag(value == 1)
            } else {
                self = .integer(value)
            }
        case .date:
            let node = try Self.element(octets, .ia5String, at: location)
            guard let text = try? node.ia5String() else {
                throw ReceiptPayloadError(.invalidValue("IA5String contains non-ASCII bytes"), at: location)
            }
            if text.isEmpty {
                self = .absentDate
                return
            }
            guard let date = ReceiptDate(rfc3339: text) else {
                throw ReceiptPayloadError(.invalidValue("\"\(text)\" is not a valid RFC 3339 date"), at: location)
            }
            self = .date(date)
        }
    }

    /// The single strict DER element that must fill `octets`, with the tag the field requires.
    private static func element(
        _ octets: ArraySlice<UInt8>,
        _ tag: ASN1Tag,
        at location: String
    ) throws(ReceiptPayloadError) -> ASN1Node {
        let node: ASN1Node
        do {
            node = try ASN1Node.parse(octets, rules: .der)
        } catch {
            let rule = error.reason == .trailingData ? "has bytes after its \(tag)" : "is not a strict DER \(tag)"
            throw ReceiptPayloadError(.invalidValue("value \(rule): \(error)"), at: location)
        }
        guard node.tag == tag else {
            throw ReceiptPayloadError(.invalidValue("value must be a \(tag), found \(node.tag)"), at: location)
        }
        return node
    }

    func string() -> String? {
        if case .string(let value) = self { return value }
        return nil
    }

    func integer() -> Int64? {
        if case .integer(let value) = self { return value }
        return nil
    }

    func flag() -> Bool? {
        if case .flag(let value) = self { return value }
        return nil
    }

    func date() -> ReceiptDate? {
        if case .date(let value) = self { return value }
        return nil
    }

    func octets() -> [UInt8]? {
        if case .octets(let value) = self { return value }
        return nil
    }
}
