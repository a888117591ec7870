import ReceiptDER
import ReceiptModel
import Testing

/// A receipt with every documented field set, undocumented attributes, and purchases in a non-sorted order.
private let everyField = Receipt(
    bundleID: "com.example.app",
    creationDate: ReceiptDate(millisecondsSince1970: 1_717_588_800_250),
    receiptType: "ProductionSandbox",
    appItemID: 1_234_567_890,
    applicationVersion: "42.1",
    originalApplicationVersion: "1.0",
    originalPurchaseDate: ReceiptDate(millisecondsSince1970: -14_182_939_999),
    expirationDate: ReceiptDate(millisecondsSince1970: 1_749_124_800_000),
    versionExternalIdentifier: -5,
    opaqueValue: Array(repeating: 0xA5, count: 200),
    sha1Hash: Array(0..<20),
    inAppPurchases: [
        InAppPurchase(
            productID: "com.example.pro.monthly",
            transactionID: "2000000123357229",
            purchaseDate: ReceiptDate(millisecondsSince1970: 1_717_230_600_001),
            quantity: 1,
            originalTransactionID: "2000000100000001",
            originalPurchaseDate: ReceiptDate(millisecondsSince1970: 1_714_545_000_000),
            productType: 2,
            expiresDate: ReceiptDate(millisecondsSince1970: 1_719_822_600_000),
            webOrderLineItemID: 2_000_000_012_345_678,
            cancellationDate: ReceiptDate(millisecondsSince1970: 1_717_406_100_000),
            isTrialPeriod: false,
            isInIntroOfferPeriod: true,
            promotionalOfferID: "launch",
            unknownAttributes: [
                ReceiptAttribute(type: 1710, version: 2, value: [0x0C, 0x01, 0x78]),
                ReceiptAttribute(type: 1709, version: 1, value: []),
            ]
        ),
        InAppPurchase(
            productID: "com.example.coins", transactionID: "3", purchaseDate: ReceiptDate(millisecondsSince1970: 0),
            quantity: nil),
        InAppPurchase(
            productID: "com.example.ads", transactionID: "1",
            purchaseDate: ReceiptDate(millisecondsSince1970: 1_709_164_800_000), quantity: Int64.max,
            isTrialPeriod: true, isInIntroOfferPeriod: false),
    ],
    unknownAttributes: [
        ReceiptAttribute(type: 8, version: 2, value: [0x16, 0x00]),
        ReceiptAttribute(type: 14, version: 1, value: [0x02, 0x01, 0x00]),
        ReceiptAttribute(type: 8, version: 3, value: [0xFF]),
    ]
)

/// Re-encodes a DER tree node by node. DER allows one encoding per value, so getting the same bytes back means every
/// length is definite and minimal, and nothing is left over anywhere.
private func reencoded(_ node: ASN1Node) throws -> [UInt8] {
    var writer = DERWriter()
    if node.tag.isConstructed {
        var children = try node.children()
        var content: [UInt8] = []
        while !children.isAtEnd { content += try reencoded(children.readNode()) }
        writer.append(node.tag, content: content)
    } else {
        writer.append(node.tag, content: node.content)
    }
    return writer.bytes
}

/// The (type, version) of each attribute of an encoded `SET OF ReceiptAttribute`, in order.
private func attributeHeaders(_ payload: [UInt8]) throws -> [(type: Int64, version: Int64)] {
    var outer = ASN1Reader(payload[...], rules: .der)
    var attributes = try outer.readSet()
    try outer.finish()
    var headers: [(type: Int64, version: Int64)] = []
    while !attributes.isAtEnd {
        var attribute = try attributes.readSequence()
        headers.append((try attribute.readInteger(), try attribute.readInteger()))
        _ = try attribute.readOctetString()
        try attribute.finish()
    }
    return headers
}

/// Checks that an encoded `SET OF ReceiptAttribute` is strict DER, including the value of every documented field
/// that holds DER (all but the opaque value and SHA-1 hash), recursing into purchases.
private func expectStrictDER(_ payload: ArraySlice<UInt8>, isPurchase: Bool) throws {
    let set = try ASN1Node.parse(payload, rules: .der)
    #expect(set.tag == .set)
    #expect(try reencoded(set) == Array(payload))
    var attributes = try set.children()
    while !attributes.isAtEnd {
        var attribute = try attributes.readSequence()
        let type: Int64 = try attribute.readInteger()
        _ = try attribute.readInteger(Int64.self)
        let value = try attribute.readOctetString()
        try attribute.finish()
        let documented = isPurchase ? InAppPurchaseField(rawValue: type) != nil : ReceiptField(rawValue: type) != nil
        guard documented,
            isPurchase || (type != ReceiptField.opaqueValue.rawValue && type != ReceiptField.sha1Hash.rawValue)
        else { continue }
        if type == ReceiptField.inAppPurchase.rawValue && !isPurchase {
            try expectStrictDER(value, isPurchase: true)
        } else {
            #expect(try reencoded(ASN1Node.parse(value, rules: .der)) == Array(value), "field \(type)")
        }
    }
}

@Suite("Receipt payload encoding")
struct ReceiptPayloadEncodingTests {
    @Test("a receipt with every field set survives payloadDER and decoding unchanged")
    func roundTrip() throws {
        let decoded = try Receipt(payload: everyField.payloadDER[...])
        #expect(decoded == everyField)
    }

    @Test("the order of purchases survives encoding")
    func purchaseOrder() throws {
        let decoded = try Receipt(payload: everyField.payloadDER[...])
        #expect(decoded.inAppPurchases.map(\.transactionID) == ["2000000123357229", "3", "1"])
    }

    @Test("undocumented attributes keep their type, version, value and order")
    func unknownAttributesKept() throws {
        let decoded = try Receipt(payload: everyField.payloadDER[...])
        #expect(decoded.unknownAttributes == everyField.unknownAttributes)
        #expect(decoded.inAppPurchases.first?.unknownAttributes == everyField.inAppPurchases.first?.unknownAttributes)
    }

    @Test("the encoding is strict DER, down to the value of every field")
    func strictDER() throws {
        try expectStrictDER(everyField.payloadDER[...], isPurchase: false)
        #expect(everyField.payloadDER.count > 255, "long enough to need two-octet lengths")
    }

    @Test("documented fields are written in numeric order with version 1, then purchases, then undocumented ones")
    func attributeOrder() throws {
        let headers = try attributeHeaders(everyField.payloadDER)
        #expect(headers.map(\.type) == [0, 1, 2, 3, 4, 5, 12, 16, 18, 19, 21, 17, 17, 17, 8, 14, 8])
        #expect(headers.map(\.version) == [1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 2, 1, 3])
        let purchaseHeaders = try attributeHeaders(everyField.inAppPurchases[0].payloadDER)
        #expect(
            purchaseHeaders.map(\.type)
                == [1701, 1702, 1703, 1704, 1705, 1706, 1707, 1708, 1711, 1712, 1713, 1719, 1721, 1710, 1709])
    }

    @Test("the minimal receipt encodes to exactly the hand-built payload")
    func minimalPayloadBytes() {
        #expect(Sample.minimalReceipt.payloadDER == setOf(Sample.requiredAttributes))
    }

    @Test("a minimal purchase encodes to exactly the hand-built nested SET")
    func minimalPurchaseBytes() {
        #expect(Sample.minimalPurchase.payloadDER == setOf(Sample.requiredPurchaseAttributes))
        var withQuantity = Sample.minimalPurchase
        withQuantity.quantity = 1
        #expect(
            withQuantity.payloadDER
                == setOf([purchaseAttribute(.quantity, integer(1))] + Sample.requiredPurchaseAttributes))
    }

    @Test("dates are written as RFC 3339 in UTC, with milliseconds only when present")
    func dateValues() throws {
        var receipt = Sample.minimalReceipt
        receipt.creationDate = ReceiptDate(millisecondsSince1970: 1_717_588_800_250)
        receipt.expirationDate = ReceiptDate(millisecondsSince1970: -1)
        #expect(
            receipt.payloadDER
                == setOf([
                    Sample.bundleIDAttribute,
                    attribute(.creationDate, ia5String("2024-06-05T12:00:00.250Z")),
                    attribute(.expirationDate, ia5String("1969-12-31T23:59:59.999Z")),
                ]))
    }

    @Test("flags are written as INTEGER 0 or 1")
    func flagValues() {
        var purchase = Sample.minimalPurchase
        purchase.isTrialPeriod = true
        purchase.isInIntroOfferPeriod = false
        let expected = setOf(
            Sample.requiredPurchaseAttributes + [
                purchaseAttribute(.isTrialPeriod, [0x02, 0x01, 0x01]),
                purchaseAttribute(.isInIntroOfferPeriod, [0x02, 0x01, 0x00]),
            ])
        #expect(purchase.payloadDER == expected)
    }
}

@Suite("Device binding inputs")
struct DeviceBindingTests {
    @Test("the bundle id value octets are the whole DER UTF8String")
    func bundleIDValueOctets() {
        #expect(Sample.minimalReceipt.bundleIDValueOctets == [0x0C, 0x0F] + Array("com.example.app".utf8))
    }

    @Test("the SHA-1 input is device identifier ‖ opaque value ‖ bundle id value octets")
    func bindingInput() throws {
        var receipt = Sample.minimalReceipt
        receipt.opaqueValue = [0x01, 0x02, 0x03]
        let device = try #require(DeviceIdentifier("6c:40:08:b5:94:5e"))
        #expect(
            receipt.deviceBindingInput(for: device)
                == [0x6C, 0x40, 0x08, 0xB5, 0x94, 0x5E, 0x01, 0x02, 0x03, 0x0C, 0x0F] + Array("com.example.app".utf8))
    }

    @Test("without an opaque value there is nothing to bind")
    func noOpaqueValue() throws {
        let device = try #require(DeviceIdentifier("956328D9-CC6A-47F4-BE40-6953FB0AB6C7"))
        #expect(Sample.minimalReceipt.deviceBindingInput(for: device) == nil)
    }
}
