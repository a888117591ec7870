import ReceiptDER
import ReceiptModel
import Testing

/// Fields Apple does not document never make a receipt invalid: they are read when they have the shape real
/// receipts give them, and otherwise kept raw.
@Suite("Receipt payload decoding: undocumented fields")
struct UndocumentedFieldTests {
    private static func inPurchase(_ extra: [[UInt8]]) -> [[UInt8]] {
        Sample.requiredAttributes + [purchase(Sample.requiredPurchaseAttributes + extra)]
    }

    @Test("only the fields in the README's format table are documented, and so strict")
    func documentedFields() {
        #expect(
            ReceiptField.allCases.filter(\.isDocumented).map(\.rawValue) == [0, 1, 2, 3, 4, 5, 12, 16, 17, 18, 19, 21])
        #expect(
            InAppPurchaseField.allCases.filter(\.isDocumented).map(\.rawValue) == [
                1701, 1702, 1703, 1704, 1705, 1706, 1708, 1711, 1712, 1713, 1719, 1721,
            ])
    }

    @Test("a product type (field 1707) that holds an INTEGER, as in real receipts, is read")
    func productTypeInteger() throws {
        let decoded = try decodePayload(Self.inPurchase([attribute(type: 1707, integer(3))]))
        #expect(decoded.inAppPurchases.first?.productType == 3)
        #expect(decoded.inAppPurchases.first?.unknownAttributes == [])
    }

    @Test(
        "a product type (field 1707) of another shape is kept raw, not refused",
        arguments: [
            ia5String("3"), utf8String("auto-renewable"), [], [0x02], element(.integer, [0x00, 0x03]),
            integer(3) + [0x00], element(.integer, [0x01, 0, 0, 0, 0, 0, 0, 0, 0]),
        ])
    func productTypeOtherShape(value: [UInt8]) throws {
        let decoded = try decodePayload(Self.inPurchase([attribute(type: 1707, value)]))
        #expect(decoded.inAppPurchases.first?.productType == nil)
        #expect(
            decoded.inAppPurchases.first?.unknownAttributes == [ReceiptAttribute(type: 1707, version: 1, value: value)])
    }

    @Test("a second product type is kept raw, whatever its shape, and the first one is read")
    func productTypeTwice() throws {
        let decoded = try decodePayload(
            Self.inPurchase([
                attribute(type: 1707, ia5String("x")), attribute(type: 1707, integer(3)),
                attribute(type: 1707, integer(2)),
            ]))
        #expect(decoded.inAppPurchases.first?.productType == 3)
        #expect(
            decoded.inAppPurchases.first?.unknownAttributes == [
                ReceiptAttribute(type: 1707, version: 1, value: ia5String("x")),
                ReceiptAttribute(type: 1707, version: 1, value: integer(2)),
            ])
    }

    @Test("the download id (field 15) that holds an INTEGER is read")
    func downloadIDInteger() throws {
        #expect(try decodePayload(Sample.requiredAttributes + [attribute(type: 15, integer(0))]).downloadID == 0)
        let large = try decodePayload(Sample.requiredAttributes + [attribute(type: 15, integer(88_000_123_456))])
        #expect(large.downloadID == 88_000_123_456)
    }

    @Test(
        "a download id of another shape, or a second one, is kept raw",
        arguments: [[utf8String("0")], [ia5String("")], [[0xFF]], [integer(1), integer(2)]])
    func downloadIDOtherShape(values: [[UInt8]]) throws {
        let decoded = try decodePayload(Sample.requiredAttributes + values.map { attribute(type: 15, $0) })
        let expectedFirst: Int64? = values.count == 2 ? 1 : nil
        #expect(decoded.downloadID == expectedFirst)
        #expect(decoded.unknownAttributes.map(\.value) == Array(values.dropFirst(values.count == 2 ? 1 : 0)))
    }

    @Test("the undocumented fields real receipts carry (6-11, 13, 14, 20, 25 …) are kept raw, in any shape or number")
    func otherUndocumentedFields() throws {
        let odd: [[UInt8]] = [[], [0x30, 0x80], utf8String("4+"), integer(-1), ia5String("2024-02-30T00:00:00Z")]
        var attributes = Sample.requiredAttributes
        for type: Int64 in [6, 7, 8, 9, 10, 11, 13, 14, 20, 25] {
            for value in odd { attributes.append(attribute(type: type, value)) }
        }
        let decoded = try decodePayload(attributes)
        #expect(decoded.unknownAttributes.count == 10 * odd.count)
        #expect(decoded.bundleID == Sample.bundleID)
    }

    @Test("documented fields keep their strict types: an app item id as an IA5String is still invalid")
    func documentedStaysStrict() {
        #expect(throws: ReceiptPayloadError.self) {
            try decodePayload(Sample.requiredAttributes + [attribute(.appItemID, ia5String("1"))])
        }
        #expect(throws: ReceiptPayloadError.self) {
            try decodePayload(Self.inPurchase([purchaseAttribute(.webOrderLineItemID, ia5String("1"))]))
        }
    }

    @Test("a receipt with raw undocumented fields re-encodes faithfully and decodes to the same receipt")
    func rawFieldsRoundTrip() throws {
        let decoded = try decodePayload(
            Sample.requiredAttributes + [attribute(type: 15, utf8String("x"))]
                + [purchase(Sample.requiredPurchaseAttributes + [attribute(type: 1707, ia5String("3"))])])
        #expect(decoded.encodesFaithfully)
        #expect(try Receipt(payload: decoded.payloadDER[...]) == decoded)
    }

    @Test("a raw undocumented field that would be read back into its typed field does not encode faithfully")
    func rawIntegerWithoutTypedValue() throws {
        var receipt = Sample.minimalReceipt
        receipt.unknownAttributes = [ReceiptAttribute(type: 15, version: 1, value: integer(4))]
        #expect(!receipt.encodesFaithfully)
        receipt.downloadID = 7
        #expect(receipt.encodesFaithfully)
        #expect(try Receipt(payload: receipt.payloadDER[...]) == receipt)
        var purchase = Sample.minimalPurchase
        purchase.unknownAttributes = [ReceiptAttribute(type: 1707, version: 1, value: integer(4))]
        receipt.inAppPurchases = [purchase]
        #expect(!receipt.encodesFaithfully)
    }
}
