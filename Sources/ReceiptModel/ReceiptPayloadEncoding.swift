import ReceiptDER

extension Receipt {
    /// The payload in DER: a `SET OF ReceiptAttribute` holding every field that is set, in field order, in-app
    /// purchases (as nested sets) in the order given, then the undocumented attributes verbatim. Like Apple's, the
    /// set is not sorted, so the order of purchases survives. Dates are written as RFC 3339 in UTC. Decoding the
    /// result gives back an equal receipt when ``encodesFaithfully`` holds.
    public var payloadDER: [UInt8] {
        let attributes = payloadAttributes
        let content = attributes.reduce(0) { $0 + $1.encodedLength }
        return [UInt8](capacity: DERWriter.encodedLength(contentLength: content)) { output in
            output.appendDERHeader(.set, length: content)
            for attribute in attributes { attribute.write(to: &output) }
        }
    }

    /// Whether ``payloadDER`` carries every value exactly, so that what is signed verifies as given: quantities
    /// are not negative, `sha1Hash` is 20 bytes, dates fall in years 0000-9999, and no unknown attribute would be
    /// read back into a field: none reuses the type of a documented field, and one with the type of an
    /// undocumented field either follows that field's value (written first) or has another shape.
    public var encodesFaithfully: Bool {
        (sha1Hash?.count ?? 20) == 20 && creationDate.isEncodable && (originalPurchaseDate?.isEncodable ?? true)
            && (expirationDate?.isEncodable ?? true)
            && unknownAttributes.allSatisfy { attribute in
                guard let field = ReceiptField(rawValue: attribute.type) else { return true }
                return !field.isDocumented && (downloadID != nil || !attribute.holdsInteger)
            }
            && inAppPurchases.allSatisfy(\.encodesFaithfully)
    }

    private var payloadAttributes: [PayloadAttribute] {
        let unknown = unknownAttributes  // decoded from their encodings once
        var attributes: [PayloadAttribute] = []
        attributes.reserveCapacity(12 + inAppPurchases.count + unknown.count)
        func add(_ field: ReceiptField, _ value: PayloadValue?) {
            if let value { attributes.append(PayloadAttribute(type: field.rawValue, version: 1, value: value)) }
        }
        add(.receiptType, receiptType.map(PayloadValue.utf8String))
        add(.appItemID, appItemID.map(PayloadValue.integer))
        add(.bundleID, .utf8String(bundleID))
        add(.applicationVersion, applicationVersion.map(PayloadValue.utf8String))
        add(.opaqueValue, opaqueValue.map(PayloadValue.octets))
        add(.sha1Hash, sha1Hash.map(PayloadValue.octets))
        add(.creationDate, .date(creationDate))
        add(.downloadID, downloadID.map(PayloadValue.integer))
        add(.versionExternalIdentifier, versionExternalIdentifier.map(PayloadValue.integer))
        add(.originalPurchaseDate, originalPurchaseDate.map { .date($0) })
        add(.originalApplicationVersion, originalApplicationVersion.map(PayloadValue.utf8String))
        add(.expirationDate, expirationDate.map { .date($0) })
        for purchase in inAppPurchases { add(.inAppPurchase, .set(purchase.payloadAttributes)) }
        attributes += unknown.map {
            PayloadAttribute(type: $0.type, version: $0.version, value: .octets($0.value))
        }
        return attributes
    }

    /// The value octets of field 2 exactly as the device binding hashes them: the whole DER UTF8String
    /// (identifier, length and text). DER has one encoding per string, so this equals the bytes received.
    public var bundleIDValueOctets: [UInt8] {
        var writer = DERWriter()
        writer.appendUTF8String(bundleID)
        return writer.bytes
    }
}

extension InAppPurchase {
    /// This purchase as the nested `SET OF ReceiptAttribute` that field 17 carries, fields in numeric order.
    public var payloadDER: [UInt8] {
        let value = PayloadValue.set(payloadAttributes)
        return [UInt8](capacity: value.encodedLength) { value.write(to: &$0) }
    }

    var encodesFaithfully: Bool {
        (quantity ?? 0) >= 0 && purchaseDate.isEncodable && (originalPurchaseDate?.isEncodable ?? true)
            && (expiresDate?.isEncodable ?? true) && (cancellationDate?.isEncodable ?? true)
            && unknownAttributes.allSatisfy { attribute in
                guard let field = InAppPurchaseField(rawValue: attribute.type) else { return true }
                return !field.isDocumented && (productType != nil || !attribute.holdsInteger)
            }
    }

    fileprivate var payloadAttributes: [PayloadAttribute] {
        let unknown = unknownAttributes  // decoded from their encodings once
        var attributes: [PayloadAttribute] = []
        attributes.reserveCapacity(13 + unknown.count)
        func add(_ field: InAppPurchaseField, _ value: PayloadValue?) {
            if let value { attributes.append(PayloadAttribute(type: field.rawValue, version: 1, value: value)) }
        }
        add(.quantity, quantity.map(PayloadValue.integer))
        add(.productID, .utf8String(productID))
        add(.transactionID, .utf8String(transactionID))
        add(.purchaseDate, .date(purchaseDate))
        add(.originalTransactionID, originalTransactionID.map(PayloadValue.utf8String))
        add(.originalPurchaseDate, originalPurchaseDate.map { .date($0) })
        add(.productType, productType.map(PayloadValue.integer))
        add(.expiresDate, expiresDate.map { .date($0) })
        add(.webOrderLineItemID, webOrderLineItemID.map(PayloadValue.integer))
        add(.cancellationDate, cancellationDate.map { .date($0) })
        add(.isTrialPeriod, isTrialPeriod.map { .integer($0 ? 1 : 0) })
        add(.isInIntroOfferPeriod, isInIntroOfferPeriod.map { .integer($0 ? 1 : 0) })
        add(.promotionalOfferID, promotionalOfferID.map(PayloadValue.utf8String))
        attributes += unknown.map {
            PayloadAttribute(type: $0.type, version: $0.version, value: .octets($0.value))
        }
        return attributes
    }
}

extension ReceiptDate {
    /// Whether the date has a four-digit year, as the payload's RFC 3339 form requires.
    fileprivate var isEncodable: Bool { self >= .earliest && self <= .latest }
}

/// `ReceiptAttribute ::= SEQUENCE { type INTEGER, version INTEGER, value OCTET STRING }`, measured before it is
/// written, so every length is known when its header is written and nothing is copied twice.
private struct PayloadAttribute {
    let type: Int64
    let version: Int64
    let value: PayloadValue
    let valueLength: Int
    let contentLength: Int

    init(type: Int64, version: Int64, value: PayloadValue) {
        self.type = type
        self.version = version
        self.value = value
        valueLength = value.encodedLength
        contentLength =
            DERWriter.encodedLength(contentLength: DERWriter.integerContentLength(type))
            + DERWriter.encodedLength(contentLength: DERWriter.integerContentLength(version))
            + DERWriter.encodedLength(contentLength: valueLength)
    }

    var encodedLength: Int { DERWriter.encodedLength(contentLength: contentLength) }

    func write(to output: inout OutputSpan<UInt8>) {
        output.appendDERHeader(.sequence, length: contentLength)
        output.appendDERInteger(type)
        output.appendDERInteger(version)
        output.appendDERHeader(.octetString, length: valueLength)
        value.write(to: &output)
    }
}

/// What an attribute's OCTET STRING holds.
private enum PayloadValue {
    /// A DER UTF8String.
    case utf8String(String)
    /// A DER INTEGER.
    case integer(Int64)
    /// A DER IA5String of this date in RFC 3339.
    case date(ReceiptDate)
    /// The octets themselves.
    case octets([UInt8])
    /// A DER SET OF these attributes (an in-app purchase).
    case set([PayloadAttribute])

    var encodedLength: Int {
        switch self {
        case .utf8String(let text): DERWriter.encodedLength(contentLength: text.utf8.count)
        case .integer(let value): DERWriter.encodedLength(contentLength: DERWriter.integerContentLength(value))
        case .date(let date): DERWriter.encodedLength(contentLength: date.rfc3339ByteCount)
        case .octets(let bytes): bytes.count
        case .set(let attributes):
            DERWriter.encodedLength(contentLength: attributes.reduce(0) { $0 + $1.encodedLength })
        }
    }

    func write(to output: inout OutputSpan<UInt8>) {
        switch self {
        case .utf8String(let text):
            output.appendDERHeader(.utf8String, length: text.utf8.count)
            output.appendUTF8(text)
        case .integer(let value): output.appendDERInteger(value)
        case .date(let date):
            output.appendDERHeader(.ia5String, length: date.rfc3339ByteCount)
            date.appendRFC3339(to: &output)
        case .octets(let bytes): output.appendOctets(bytes.span)
        case .set(let attributes):
            output.appendDERHeader(.set, length: attributes.reduce(0) { $0 + $1.encodedLength })
            for attribute in attributes { attribute.write(to: &output) }
        }
    }
}
