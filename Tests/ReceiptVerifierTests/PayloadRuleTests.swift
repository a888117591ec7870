import ReceiptCrypto
import ReceiptDER
import ReceiptModel
import ReceiptVerifier
import Testing

/// Payloads that are signed correctly but break a rule of the receipt format.
@Suite("Payload rules inside a signed receipt")
struct PayloadRuleTests {
    static func code(_ payload: [UInt8]) throws -> ReceiptVerificationError.Code? {
        let builder = EnvelopeBuilder(payload: payload, chain: try TestFixtures.chain(.ecP256))
        return TestFixtures.code(try builder.build(), try TestFixtures.verifier(.ecP256))
    }

    static func set(_ attributes: [[UInt8]]) -> [UInt8] { PayloadBuilder.set(attributes) }
    static func attribute(_ type: Int64, _ value: [UInt8]) -> [UInt8] { PayloadBuilder.attribute(type, value) }

    @Test("the minimal payload (bundle id and creation date) verifies")
    func minimal() throws {
        #expect(try Self.code(Self.set(PayloadBuilder.minimal())) == nil)
    }

    @Test("attribute order is free")
    func unsortedAttributes() throws {
        #expect(try Self.code(Self.set(PayloadBuilder.minimal().reversed())) == nil)
    }

    @Test("unknown attributes are kept raw")
    func unknownAttributesKept() throws {
        let payload = Self.set(
            PayloadBuilder.minimal(extra: [Self.attribute(10, PayloadBuilder.ia5("4+")), Self.attribute(99, [0xFF])]))
        let builder = EnvelopeBuilder(payload: payload, chain: try TestFixtures.chain(.ecP256))
        let receipt = try TestFixtures.verifier(.ecP256).verify(builder.build()).receipt
        #expect(
            receipt.unknownAttributes == [
                ReceiptAttribute(type: 10, version: 1, value: PayloadBuilder.ia5("4+")),
                ReceiptAttribute(type: 99, version: 1, value: [0xFF]),
            ])
    }

    @Test("a malformed unknown attribute is refused")
    func malformedUnknownAttribute() throws {
        var writer = DERWriter()
        writer.appendSequence {
            $0.appendInteger(99)
            $0.appendOctetString([1])
        }
        #expect(try Self.code(Self.set(PayloadBuilder.minimal(extra: [writer.bytes]))) == .unreadablePayload)
    }

    @Test("a non-minimal length in the payload is refused")
    func nonMinimalLength() throws {
        let content = PayloadBuilder.minimal().joined()
        #expect(try Self.code([0x31, 0x81, UInt8(content.count)] + content) == .unreadablePayload)
    }

    @Test("an indefinite length in the payload is refused")
    func indefiniteLength() throws {
        #expect(try Self.code([0x31, 0x80] + PayloadBuilder.minimal().joined() + [0x00, 0x00]) == .unreadablePayload)
    }

    @Test("bytes after the payload's SET are refused")
    func trailingPayloadBytes() throws {
        #expect(try Self.code(Self.set(PayloadBuilder.minimal()) + [0x00]) == .unreadablePayload)
    }

    @Test("a payload that is a SEQUENCE instead of a SET is refused")
    func sequenceInsteadOfSet() throws {
        var writer = DERWriter()
        writer.append(.sequence, content: PayloadBuilder.minimal().joined())
        #expect(try Self.code(writer.bytes) == .unreadablePayload)
    }

    @Test("a non-minimal INTEGER attribute type is refused")
    func nonMinimalType() throws {
        let attribute: [UInt8] = [0x30, 0x0A, 0x02, 0x02, 0x00, 0x02, 0x02, 0x01, 0x01, 0x04, 0x01, 0x00]
        #expect(try Self.code(Self.set(PayloadBuilder.minimal(extra: [attribute]))) == .unreadablePayload)
    }

    @Test("a duplicate bundle id is refused even with the same value")
    func duplicateBundleID() throws {
        let payload = Self.set(
            PayloadBuilder.minimal(extra: [Self.attribute(2, PayloadBuilder.utf8("com.example.game"))]))
        #expect(try Self.code(payload) == .duplicateAttribute)
    }

    @Test("a duplicate creation date is refused")
    func duplicateCreationDate() throws {
        let payload = Self.set(
            PayloadBuilder.minimal(extra: [Self.attribute(12, PayloadBuilder.ia5("2020-01-01T00:00:00Z"))]))
        #expect(try Self.code(payload) == .duplicateAttribute)
    }

    @Test("a duplicate product id inside one purchase is refused")
    func duplicateProductID() throws {
        let purchase = Self.set([
            Self.attribute(1702, PayloadBuilder.utf8("a")), Self.attribute(1702, PayloadBuilder.utf8("b")),
            Self.attribute(1703, PayloadBuilder.utf8("1")),
            Self.attribute(1704, PayloadBuilder.ia5("2024-01-01T00:00:00Z")),
        ])
        #expect(
            try Self.code(Self.set(PayloadBuilder.minimal(extra: [Self.attribute(17, purchase)])))
                == .duplicateAttribute)
    }

    @Test("a missing bundle id is refused")
    func missingBundleID() throws {
        #expect(
            try Self.code(Self.set([Self.attribute(12, PayloadBuilder.ia5("2024-06-05T12:00:00Z"))])) == .missingField)
    }

    @Test("a purchase without a transaction id is refused")
    func missingTransactionID() throws {
        let purchase = Self.set([
            Self.attribute(1702, PayloadBuilder.utf8("a")),
            Self.attribute(1704, PayloadBuilder.ia5("2024-01-01T00:00:00Z")),
        ])
        #expect(try Self.code(Self.set(PayloadBuilder.minimal(extra: [Self.attribute(17, purchase)]))) == .missingField)
    }

    @Test("a known field with the wrong inner type is refused")
    func wrongInnerType() throws {
        let payload = Self.set([
            Self.attribute(2, PayloadBuilder.ia5("com.example.game")),
            Self.attribute(12, PayloadBuilder.ia5("2024-06-05T12:00:00Z")),
        ])
        #expect(try Self.code(payload) == .invalidField)
    }

    @Test("invalid UTF-8 in a UTF8String field is refused")
    func invalidUTF8() throws {
        let payload = Self.set(PayloadBuilder.minimal(extra: [Self.attribute(3, [0x0C, 0x02, 0xC0, 0xAF])]))
        #expect(try Self.code(payload) == .invalidField)
    }

    @Test("an impossible date is refused")
    func impossibleDate() throws {
        let payload = Self.set([
            Self.attribute(2, PayloadBuilder.utf8("com.example.game")),
            Self.attribute(12, PayloadBuilder.ia5("2024-02-30T12:00:00Z")),
        ])
        #expect(try Self.code(payload) == .invalidField)
    }

    @Test("bytes after a field's inner value are refused")
    func trailingBytesInValue() throws {
        let payload = Self.set(PayloadBuilder.minimal(extra: [Self.attribute(3, PayloadBuilder.utf8("1.0") + [0x00])]))
        #expect(try Self.code(payload) == .invalidField)
    }

    @Test("too many purchases are refused before they are decoded")
    func tooManyPurchases() throws {
        let purchase = Self.attribute(17, TestFixtures.receipt().inAppPurchases[0].payloadDER)
        let payload = Self.set(PayloadBuilder.minimal(extra: Array(repeating: purchase, count: 4)))
        let builder = EnvelopeBuilder(payload: payload, chain: try TestFixtures.chain(.ecP256))
        let verifier = try ReceiptVerifier(
            trustAnchors: [TestFixtures.chain(.ecP256).root], limits: VerificationLimits(maximumPurchases: 3))
        #expect(TestFixtures.code(try builder.build(), verifier) == .tooLarge)
    }
}
