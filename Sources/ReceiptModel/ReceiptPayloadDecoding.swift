import ReceiptDER

extension Receipt {
    /// Decodes a receipt payload: a strict DER `SET OF ReceiptAttribute` filling `payload` exactly.
    ///
    /// Attribute order is free (Apple does not sort). Documented fields must carry their documented encoding in
    /// strict DER with nothing trailing; each may appear once, except in-app purchases. Undocumented fields never
    /// reject a receipt: the first occurrence in the shape real receipts give it is read, anything else is kept
    /// raw. `bundle_id`,
    /// `receipt_creation_date` and, in each purchase, `product_id`, `transaction_id` and `purchase_date` are
    /// required. Undocumented attributes are kept raw. More than `maximumPurchases` purchases are refused before
    /// any of them is decoded.
    public init(payload: ArraySlice<UInt8>, maximumPurchases: Int = .max) throws(ReceiptPayloadError) {
        let attributes = try AttributeSet(payload, range: 0..<payload.count, at: .payload)
        var purchaseCount = 0
        var position = attributes.contentStart
        while position < attributes.end {
            let (type, end) = try attributes.type(at: position)
            position = end
            guard type == ReceiptField.inAppPurchase.rawValue else { continue }
            purchaseCount += 1
            guard purchaseCount <= maximumPurchases else {
                throw ReceiptPayloadError(.tooManyPurchases(limit: maximumPurchases), at: nil)
            }
        }
        var decoder = FieldDecoder<ReceiptField>()
        var purchases: [InAppPurchase] = []
        purchases.reserveCapacity(purchaseCount)
        var shared = SharedPurchaseValues()
        var unknown = RawAttributes()
        var receiptType: String?, bundleID: String?, applicationVersion: String?, originalApplicationVersion: String?
        var appItemID: Int64?, versionExternalIdentifier: Int64?, downloadID: Int64?
        var opaqueValue: [UInt8]?, sha1Hash: [UInt8]?
        var creationDate: ReceiptDate?, originalPurchaseDate: ReceiptDate?, expirationDate: ReceiptDate?
        position = attributes.contentStart
        while position < attributes.end {
            let start = position
            let attribute = try attributes.attribute(at: position)
            position = attribute.end
            guard let field = ReceiptField(rawValue: attribute.type) else {
                attributes.keep(from: start, attribute, in: &unknown)
                continue
            }
            if field == .inAppPurchase {
                let purchase = try InAppPurchase(
                    payload: payload, range: attribute.value, index: purchases.count, shared: &shared)
                purchases.append(purchase)
                continue
            }
            let location = PayloadLocation.field(field)
            let value = Value(range: attribute.value, location: location)
            guard field.isDocumented else {
                // Only download_id (field 15) is undocumented: read when it is an INTEGER, else kept raw.
                if let integer = value.integerIfWellFormed(in: payload), decoder.markFirst(slot: field.slot) {
                    downloadID = integer
                } else {
                    attributes.keep(from: start, attribute, in: &unknown)
                }
                continue
            }
            try decoder.markSeen(field, slot: field.slot, at: location)
            switch field {
            case .receiptType: receiptType = try value.utf8String(in: payload)
            case .appItemID: appItemID = try value.integer(in: payload)
            case .bundleID: bundleID = try value.utf8String(in: payload)
            case .applicationVersion: applicationVersion = try value.utf8String(in: payload)
            case .opaqueValue: opaqueValue = value.octets(in: payload)
            case .sha1Hash: sha1Hash = try value.digest(in: payload)
            case .creationDate: creationDate = try value.date(in: payload)
            case .versionExternalIdentifier: versionExternalIdentifier = try value.integer(in: payload)
            case .originalPurchaseDate: originalPurchaseDate = try value.date(in: payload)
            case .originalApplicationVersion: originalApplicationVersion = try value.utf8String(in: payload)
            case .expirationDate: expirationDate = try value.date(in: payload)
            case .inAppPurchase, .downloadID: break
            }
        }
        guard let bundleID else {
            throw ReceiptPayloadError(.missingAttribute, at: PayloadLocation.field(.bundleID).description)
        }
        guard let creationDate else {
            throw ReceiptPayloadError(.missingAttribute, at: PayloadLocation.field(.creationDate).description)
        }
        self.init(
            bundleID: bundleID, creationDate: creationDate, receiptType: receiptType, appItemID: appItemID,
            applicationVersion: applicationVersion, originalApplicationVersion: originalApplicationVersion,
            originalPurchaseDate: originalPurchaseDate, expirationDate: expirationDate,
            versionExternalIdentifier: versionExternalIdentifier, downloadID: downloadID, opaqueValue: opaqueValue,
            sha1Hash: sha1Hash,
            inAppPurchases: purchases, rawAttributes: unknown)
    }
}

extension InAppPurchase {
    /// Decodes the purchase whose `SET OF ReceiptAttribute` fills `range` of `payload`, taking from `shared` the
    /// values it repeats from the previous purchase.
    fileprivate init(payload: ArraySlice<UInt8>, range: Range<Int>, index: Int, shared: inout SharedPurchaseValues)
        throws(ReceiptPayloadError)
    {
        let attributes = try AttributeSet(payload, range: range, at: .purchase(index))
        var decoder = FieldDecoder<InAppPurchaseField>()
        var unknown = RawAttributes()
        var productID: String?, transactionID: String?, originalTransactionID: String?, promotionalOfferID: String?
        var quantity: Int64?, productType: Int64?, webOrderLineItemID: Int64?
        var purchaseDate: ReceiptDate?, originalPurchaseDate: ReceiptDate?, expiresDate: ReceiptDate?
        var cancellationDate: ReceiptDate?
        var isTrialPeriod: Bool?, isInIntroOfferPeriod: Bool?
        var position = attributes.contentStart
        while position < attributes.end {
            let start = position
            let attribute = try attributes.attribute(at: position)
            position = attribute.end
            guard let field = InAppPurchaseField(rawValue: attribute.type) else {
                attributes.keep(from: start, attribute, in: &unknown)
                continue
            }
            let location = PayloadLocation.purchaseField(index, field)
            let value = Value(range: attribute.value, location: location)
            guard field.isDocumented else {
                // Only the product type (field 1707) is undocumented: read when it is an INTEGER, else kept raw.
                if let integer = value.integerIfWellFormed(in: payload), decoder.markFirst(slot: field.slot) {
                    productType = integer
                } else {
                    attributes.keep(from: start, attribute, in: &unknown)
                }
                continue
            }
            try decoder.markSeen(field, slot: field.slot, at: location)
            switch field {
            case .quantity: quantity = try value.integer(in: payload, minimum: 0)
            case .productID: productID = try value.utf8String(in: payload, reusing: &shared.productID)
            case .transactionID: transactionID = try value.utf8String(in: payload)
            case .purchaseDate: purchaseDate = try value.date(in: payload)
            case .originalTransactionID:
                originalTransactionID = try value.utf8String(in: payload, reusing: &shared.originalTransactionID)
            case .originalPurchaseDate:
                originalPurchaseDate = try value.date(in: payload, reusing: &shared.originalPurchaseDate)
            case .productType: break
            case .expiresDate: expiresDate = try value.date(in: payload)
            case .webOrderLineItemID: webOrderLineItemID = try value.integer(in: payload)
            case .cancellationDate: cancellationDate = try value.date(in: payload)
            case .isTrialPeriod: isTrialPeriod = try value.flag(in: payload)
            case .isInIntroOfferPeriod: isInIntroOfferPeriod = try value.flag(in: payload)
            case .promotionalOfferID: promotionalOfferID = try value.utf8String(in: payload)
            }
        }
        func missing(_ field: InAppPurchaseField) -> ReceiptPayloadError {
            ReceiptPayloadError(.missingAttribute, at: PayloadLocation.purchaseField(index, field).description)
        }
        guard let productID else { throw missing(.productID) }
        guard let transactionID else { throw missing(.transactionID) }
        guard let purchaseDate else { throw missing(.purchaseDate) }
        self.init(
            productID: productID, transactionID: transactionID, purchaseDate: purchaseDate, quantity: quantity,
            originalTransactionID: originalTransactionID, originalPurchaseDate: originalPurchaseDate,
            productType: productType, expiresDate: expiresDate, webOrderLineItemID: webOrderLineItemID,
            cancellationDate: cancellationDate, isTrialPeriod: isTrialPeriod,
            isInIntroOfferPeriod: isInIntroOfferPeriod, promotionalOfferID: promotionalOfferID, rawAttributes: unknown)
    }
}

extension ReceiptAttribute {
    /// Whether the value octets are exactly one strict DER INTEGER of at most 64 bits: the shape in which the
    /// decoder reads an undocumented field rather than keeping it raw.
    var holdsInteger: Bool {
        Value(range: 0..<value.count, location: .payload).integerIfWellFormed(in: value[...]) != nil
    }
}

/// The values the purchases of a receipt mostly share, decoded once: every renewal of a subscription has the
/// product id, original transaction id and original purchase date of the first. Each is kept with the value octets
/// it was decoded from; a purchase whose octets are the same takes the value already decoded.
private struct SharedPurchaseValues {
    /// A decoded value and the value octets (a range of the payload) it was decoded from.
    struct Decoded<Value> {
        let octets: Range<Int>
        let value: Value
    }

    var productID: Decoded<String>?
    var originalTransactionID: Decoded<String>?
    var originalPurchaseDate: Decoded<ReceiptDate?>?
}

/// Where in the payload something is, turned into text only when an error is reported.
private enum PayloadLocation: CustomStringConvertible {
    case payload
    case field(ReceiptField)
    case purchase(Int)
    case purchaseField(Int, InAppPurchaseField)

    var description: String {
        switch self {
        case .payload: "payload"
        case .field(let field): "\(field.name) (field \(field.rawValue))"
        case .purchase(let index): "in_app[\(index)]"
        case .purchaseField(let index, let field): "in_app[\(index)].\(field.name) (field \(field.rawValue))"
        }
    }

    /// The location errors of the whole payload are reported at (nil for the payload itself).
    var reported: String? {
        if case .payload = self { return nil }
        return description
    }
}

/// Which documented fields have been seen, to refuse a second occurrence whatever its value.
private struct FieldDecoder<Field> {
    private var seen: UInt32 = 0

    mutating func markSeen(_ field: Field, slot: Int, at location: PayloadLocation) throws(ReceiptPayloadError) {
        guard markFirst(slot: slot) else { throw ReceiptPayloadError(.duplicateAttribute, at: location.description) }
    }

    /// Marks the field in `slot` seen; false when it had been seen already.
    mutating func markFirst(slot: Int) -> Bool {
        let bit: UInt32 = 1 << slot
        guard seen & bit == 0 else { return false }
        seen |= bit
        return true
    }
}

extension ReceiptField {
    /// A distinct small number per field, for ``FieldDecoder``.
    fileprivate var slot: Int {
        switch self {
        case .receiptType: 0
        case .appItemID: 1
        case .bundleID: 2
        case .applicationVersion: 3
        case .opaqueValue: 4
        case .sha1Hash: 5
        case .creationDate: 6
        case .versionExternalIdentifier: 7
        case .inAppPurchase: 8
        case .originalPurchaseDate: 9
        case .originalApplicationVersion: 10
        case .expirationDate: 11
        case .downloadID: 12
        }
    }
}

extension InAppPurchaseField {
    /// A distinct small number per field, for ``FieldDecoder``.
    fileprivate var slot: Int { Int(rawValue - 1701) }
}

/// A strict DER `SET OF ReceiptAttribute` that fills a range of the payload, read by position.
private struct AttributeSet {
    /// One `ReceiptAttribute ::= SEQUENCE { type INTEGER, version INTEGER, value OCTET STRING }`, its value still
    /// encoded.
    struct Attribute {
        let type: Int64
        let version: Int64
        /// Where the value octets lie in the payload slice (0-based).
        let value: Range<Int>
        let end: Int
    }

    let payload: ArraySlice<UInt8>
    let contentStart: Int
    let end: Int
    let location: PayloadLocation

    init(_ payload: ArraySlice<UInt8>, range: Range<Int>, at location: PayloadLocation) throws(ReceiptPayloadError) {
        do throws(DERError) {
            let set = try DERSpanReader.element(
                in: payload.span, at: range.lowerBound, limit: range.upperBound, base: payload.startIndex,
                expecting: .set)
            guard set.end == range.upperBound else {
                throw DERError(.trailingData, at: payload.startIndex + set.end)
            }
            self.payload = payload
            contentStart = set.contentStart
            end = set.end
            self.location = location
        } catch {
            throw ReceiptPayloadError(.malformed(error), at: location.reported)
        }
    }

    func attribute(at position: Int) throws(ReceiptPayloadError) -> Attribute {
        if let attribute = Self.commonAttribute(in: payload.span, at: position, limit: end) { return attribute }
        return try reading { span, base throws(DERError) in
            let (sequence, type) = try Self.sequenceAndType(in: span, at: position, limit: end, base: base)
            let version = try DERSpanReader.integer(in: span, at: type.end, limit: sequence.end, base: base)
            let value = try DERSpanReader.element(in: span, at: version.end, limit: sequence.end, base: base)
            guard value.tag == .octetString else {
                let reason: DERError.Reason =
                    value.tag == ASN1Tag.octetString.toggledForm
                    ? .constructedStringNotAllowed : .unexpectedTag(expected: .octetString, found: value.tag)
                throw DERError(reason, at: base + value.start)
            }
            guard value.end == sequence.end else { throw DERError(.trailingData, at: base + value.end) }
            return Attribute(
                type: type.value, version: version.value, value: value.contentStart..<value.end, end: sequence.end)
        }
    }

    /// Only the type of the attribute at `position`, and where the attribute ends: enough to count purchases
    /// before decoding any (the rest is checked when the attribute is decoded).
    func type(at position: Int) throws(ReceiptPayloadError) -> (type: Int64, end: Int) {
        let span = payload.span
        if let sequence = DERSpanReader.content(.sequence, in: span, at: position, limit: end),
            let type = DERSpanReader.content(.integer, in: span, at: sequence.lowerBound, limit: sequence.upperBound),
            let value = DERSpanReader.int64(ifMinimal: type, in: span)
        {
            return (value, sequence.upperBound)
        }
        return try reading { span, base throws(DERError) in
            let (sequence, type) = try Self.sequenceAndType(in: span, at: position, limit: end, base: base)
            return (type.value, sequence.end)
        }
    }

    /// The attribute at `position` read in one step when it is in the shape signers write (one-octet tags, lengths
    /// of at most two octets, INTEGERs of at most 64 bits); nil for anything else, which ``attribute(at:)`` then
    /// reads in full. Whatever it returns, the full reading returns too.
    private static func commonAttribute(in span: Span<UInt8>, at position: Int, limit: Int) -> Attribute? {
        guard let sequence = DERSpanReader.content(.sequence, in: span, at: position, limit: limit) else { return nil }
        let end = sequence.upperBound
        guard let type = DERSpanReader.content(.integer, in: span, at: sequence.lowerBound, limit: end),
            let typeValue = DERSpanReader.int64(ifMinimal: type, in: span),
            let version = DERSpanReader.content(.integer, in: span, at: type.upperBound, limit: end),
            let versionValue = DERSpanReader.int64(ifMinimal: version, in: span),
            let value = DERSpanReader.content(.octetString, in: span, at: version.upperBound, limit: end),
            value.upperBound == end
        else { return nil }
        return Attribute(type: typeValue, version: versionValue, value: value, end: end)
    }

    /// The attribute SEQUENCE at `position` and its first element, the type.
    private static func sequenceAndType(in span: Span<UInt8>, at position: Int, limit: Int, base: Int)
        throws(DERError) -> (sequence: DERSpanReader.Element, type: (value: Int64, end: Int))
    {
        let sequence = try DERSpanReader.element(in: span, at: position, limit: limit, base: base, expecting: .sequence)
        let type = try DERSpanReader.integer(in: span, at: sequence.contentStart, limit: sequence.end, base: base)
        return (sequence, type)
    }

    /// Runs `body` over the payload's bytes, reporting its DER errors at this set's location.
    private func reading<Result>(_ body: (Span<UInt8>, Int) throws(DERError) -> Result)
        throws(ReceiptPayloadError) -> Result
    {
        do throws(DERError) {
            return try body(payload.span, payload.startIndex)
        } catch {
            throw ReceiptPayloadError(.malformed(error), at: location.reported)
        }
    }

    /// Adds `attribute`, which starts at `start`, to `raw` as it is encoded.
    func keep(from start: Int, _ attribute: Attribute, in raw: inout RawAttributes) {
        raw.append(encoding: payload[slice: start..<attribute.end], room: end - start)
    }
}

/// The value octets of one documented field, decoded as that field requires.
private struct Value {
    let range: Range<Int>
    let location: PayloadLocation

    func octets(in payload: ArraySlice<UInt8>) -> [UInt8] { Array(payload[slice: range]) }

    /// Where the content lies of the single strict DER element that must fill the value octets, with the tag the
    /// field requires: read in one step in the usual case, otherwise by ``element(_:in:)``, which says what is wrong.
    func content(_ tag: ASN1Tag, in payload: ArraySlice<UInt8>) throws(ReceiptPayloadError) -> Range<Int> {
        if let content = DERSpanReader.content(tag, in: payload.span, at: range.lowerBound, limit: range.upperBound),
            content.upperBound == range.upperBound
        {
            return content
        }
        let element = try element(tag, in: payload)
        return element.contentStart..<element.end
    }

    /// The single strict DER element that must fill the value octets, with the tag the field requires.
    func element(_ tag: ASN1Tag, in payload: ArraySlice<UInt8>) throws(ReceiptPayloadError) -> DERSpanReader.Element {
        let element: DERSpanReader.Element
        do {
            element = try DERSpanReader.element(
                in: payload.span, at: range.lowerBound, limit: range.upperBound, base: payload.startIndex)
        } catch {
            throw ReceiptPayloadError(
                .invalidValue("value is not a strict DER \(tag): \(error)"), at: location.description)
        }
        guard element.tag == tag else {
            throw ReceiptPayloadError(
                .invalidValue("value must be a \(tag), found \(element.tag)"), at: location.description)
        }
        guard element.end == range.upperBound else {
            let error = DERError(.trailingData, at: payload.startIndex + element.end)
            throw ReceiptPayloadError(
                .invalidValue("value has bytes after its \(tag): \(error)"), at: location.description)
        }
        return element
    }

    func utf8String(in payload: ArraySlice<UInt8>) throws(ReceiptPayloadError) -> String {
        let content = try content(.utf8String, in: payload)
        let bytes = payload[slice: content]
        // ASCII is valid UTF-8, and decoding it is about twice as fast as validating.
        if payload.span.isASCII(content) { return String(decoding: bytes, as: UTF8.self) }
        guard let text = String(validating: bytes, as: UTF8.self) else {
            throw ReceiptPayloadError(.invalidValue("UTF8String is not valid UTF-8"), at: location.description)
        }
        return text
    }

    /// ``utf8String(in:)``, or `previous`'s string when these value octets are the ones it was decoded from;
    /// `previous` then holds what was decoded here.
    func utf8String(in payload: ArraySlice<UInt8>, reusing previous: inout SharedPurchaseValues.Decoded<String>?)
        throws(ReceiptPayloadError) -> String
    {
        if let previous, payload.span.octets(previous.octets, equal: range) { return previous.value }
        let text = try utf8String(in: payload)
        previous = SharedPurchaseValues.Decoded(octets: range, value: text)
        return text
    }

    func integer(in payload: ArraySlice<UInt8>, minimum: Int64 = .min) throws(ReceiptPayloadError) -> Int64 {
        let content = try content(.integer, in: payload)
        guard let value = DERSpanReader.int64(ifMinimal: content, in: payload.span) else {
            throw ReceiptPayloadError(
                .invalidValue("INTEGER is not minimally encoded or exceeds 64 bits"), at: location.description)
        }
        guard value >= minimum else {
            throw ReceiptPayloadError(.invalidValue("must not be negative, found \(value)"), at: location.description)
        }
        return value
    }

    /// The INTEGER when the value octets hold exactly one strict DER INTEGER of at most 64 bits; nil for any other
    /// shape (an undocumented field's value that is kept raw instead).
    func integerIfWellFormed(in payload: ArraySlice<UInt8>) -> Int64? {
        do {
            return try integer(in: payload)
        } catch {
            return nil
        }
    }

    func flag(in payload: ArraySlice<UInt8>) throws(ReceiptPayloadError) -> Bool {
        let value = try integer(in: payload)
        guard value == 0 || value == 1 else {
            throw ReceiptPayloadError(.invalidValue("must be 0 or 1, found \(value)"), at: location.description)
        }
        return value == 1
    }

    func digest(in payload: ArraySlice<UInt8>) throws(ReceiptPayloadError) -> [UInt8] {
        guard range.count == 20 else {
            throw ReceiptPayloadError(
                .invalidValue("must be 20 bytes (a SHA-1 digest), found \(range.count)"), at: location.description)
        }
        return octets(in: payload)
    }

    /// ``date(in:)``, or `previous`'s date when these value octets are the ones it was decoded from; `previous`
    /// then holds what was decoded here.
    func date(in payload: ArraySlice<UInt8>, reusing previous: inout SharedPurchaseValues.Decoded<ReceiptDate?>?)
        throws(ReceiptPayloadError) -> ReceiptDate?
    {
        if let previous, payload.span.octets(previous.octets, equal: range) { return previous.value }
        let date = try date(in: payload)
        previous = SharedPurchaseValues.Decoded(octets: range, value: date)
        return date
    }

    /// An IA5String RFC 3339 date; nil for an empty string, which means the date is absent.
    func date(in payload: ArraySlice<UInt8>) throws(ReceiptPayloadError) -> ReceiptDate? {
        let content = try content(.ia5String, in: payload)
        // A date in the form signers write is ASCII and valid: the checks below are for every other form.
        if let date = ReceiptDate(canonicalUTC: payload.span, content) { return date }
        let text = payload[slice: content]
        guard payload.span.isASCII(content) else {
            throw ReceiptPayloadError(.invalidValue("IA5String contains non-ASCII bytes"), at: location.description)
        }
        if text.isEmpty { return nil }
        guard let date = ReceiptDate(rfc3339Bytes: text) else {
            let shown = String(decoding: text, as: UTF8.self)
            throw ReceiptPayloadError(
                .invalidValue("\"\(shown)\" is not a valid RFC 3339 date"), at: location.description)
        }
        return date
    }
}

extension Span<UInt8> {
    /// Whether every byte in `range` is below 0x80, tested eight at a time.
    fileprivate func isASCII(_ range: Range<Int>) -> Bool {
        var seen: UInt64 = 0
        var index = range.lowerBound
        while range.upperBound - index >= 8 {
            seen |= bytes.unsafeLoadUnaligned(fromByteOffset: index, as: UInt64.self)
            index += 8
        }
        while index < range.upperBound {
            seen |= UInt64(self[index])
            index += 1
        }
        return seen & 0x8080_8080_8080_8080 == 0
    }

    /// Whether the bytes in ranges `first` and `second` are the same, compared eight at a time.
    fileprivate func octets(_ first: Range<Int>, equal second: Range<Int>) -> Bool {
        guard first.count == second.count else { return false }
        var (index, other) = (first.lowerBound, second.lowerBound)
        while first.upperBound - index >= 8 {
            guard
                bytes.unsafeLoadUnaligned(fromByteOffset: index, as: UInt64.self)
                    == bytes.unsafeLoadUnaligned(fromByteOffset: other, as: UInt64.self)
            else { return false }
            (index, other) = (index + 8, other + 8)
        }
        while index < first.upperBound {
            guard self[index] == self[other] else { return false }
            (index, other) = (index + 1, other + 1)
        }
        return true
    }
}

extension ArraySlice {
    /// The elements at 0-based `offsets` from this slice's start.
    fileprivate subscript(slice offsets: Range<Int>) -> ArraySlice<Element> {
        self[(startIndex + offsets.lowerBound)..<(startIndex + offsets.upperBound)]
    }
}
