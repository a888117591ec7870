import ReceiptDER

extension Receipt {
    /// The payload in DER: a `SET OF ReceiptAttribute` holding every field that is set, in field order, in-app
    /// purchases (as nested sets) in the order given, then the undocumented attributes verbatim. Like Apple's, the
    /// set is not sorted, so the order of purchases survives. Dates are written as RFC 3339 in UTC. Decoding the
    /// result gives back an equal receipt.
    public var payloadDER: [UInt8] {
        var attributes: [[UInt8]] = []
        func add(_ field: ReceiptField, _ value: [UInt8]?) {
            if let value { attributes.append(encodeAttribute(type: field.rawValue, version: 1, value: value)) }
        }
        add(.receiptType, receiptType.map(utf8Value))
        add(.appItemID, appItemID.map(integerValue))
        add(.bundleID, bundleIDValueOctets)
        add(.applicationVersion, applicationVersion.map(utf8Value))
        add(.opaqueValue, opaqueValue)
        add(.sha1Hash, sha1Hash)
        add(.creationDate, dateValue(creationDate))
        add(.versionExternalIdentifier, versionExternalIdentifier.map(integerValue))
        add(.originalPurchaseDate, originalPurchaseDate.map(dateValue))
        add(.originalApplicationVersion, originalApplicationVersion.map(utf8Value))
        add(.expirationDate, expirationDate.map(dateValue))
        for purchase in inAppPurchases { add(.inAppPurchase, purchase.payloadDER) }
        attributes += unknownAttributes.map { encodeAttribute(type: $0.type, version: $0.version, value: $0.value) }
        return encodeSet(attributes)
    }
}

extension InAppPurchase {
    /// This purchase as the nested `SET OF ReceiptAttribute` that field 17 carries, fields in numeric order.
    public var payloadDER: [UInt8] {
        var attributes: [[UInt8]] = []
        func add(_ field: InAppPurchaseField, _ value: [UInt8]?) {
            if let value { attributes.append(encodeAttribute(type: field.rawValue, version: 1, value: value)) }
        }
        add(.quantity, quantity.map(integerValue))
        add(.productID, utf8Value(productID))
        add(.transactionID, utf8Value(transactionID))
        add(.purchaseDate, dateValue(purchaseDate))
        add(.originalTransactionID, originalTransactionID.map(utf8Value))
        add(.originalPurchaseDate, originalPurchaseDate.map(dateValue))
        add(.productType, productType.map(integerValue))
        add(.expiresDate, expiresDate.map(dateValue))
        add(.webOrderLineItemID, webOrderLineItemID.map(integerValue))
        add(.cancellationDate, cancellationDate.map(dateValue))
        add(.isTrialPeriod, isTrialPeriod.map { integerValue($0 ? 1 : 0) })
        add(.isInIntroOfferPeriod, isInIntroOfferPeriod.map { integerValue($0 ? 1 : 0) })
        add(.promotionalOfferID, promotionalOfferID.map(utf8Value))
        attributes += unknownAttributes.map { encodeAttribute(type: $0.type, version: $0.version, value: $0.value) }
        return encodeSet(attributes)
    }
}

/// `SET OF` with the elements in the order given.
private func encodeSet(_ elements: [[UInt8]]) -> [UInt8] {
    var writer = DERWriter()
    writer.append(.set, contentsOf: elements)
    return writer.bytes
}

private func encodeAttribute(type: Int64, version: Int64, value: [UInt8]) -> [UInt8] {
    var writer = DERWriter()
    writer.appendSequence { attribute in
        attribute.appendInteger(type)
        attribute.appendInteger(version)
        attribute.appendOctetString(value)
    }
    return writer.bytes
}

func utf8Value(_ text: String) -> [UInt8] {
    var writer = DERWriter()
    writer.appendUTF8String(text)
    return writer.bytes
}

private func integerValue(_ value: Int64) -> [UInt8] {
    var writer = DERWriter()
    writer.appendInteger(value)
    return writer.bytes
}

private func dateValue(_ date: ReceiptDate) -> [UInt8] {
    var writer = DERWriter()
    writer.appendIA5String(date.rfc3339)
    return writer.bytes
}
