import ReceiptDER
import Testing

@Suite("Identifier octets: class, form and tag number (X.690 §8.1.2)")
struct TagTests {
    @Test(
        "low tag numbers are read from the first identifier octet",
        arguments: [
            (hex("02 01 00"), ASN1Tag.integer),
            (hex("30 00"), ASN1Tag.sequence),
            (hex("31 00"), ASN1Tag.set),
            (hex("80 00"), ASN1Tag.contextSpecific(0, constructed: false)),
            (hex("A3 00"), ASN1Tag.contextSpecific(3, constructed: true)),
            (hex("5E 00"), ASN1Tag(.application, number: 30, constructed: false)),
            (hex("FE 00"), ASN1Tag(.private, number: 30, constructed: true)),
        ])
    func lowTagNumbers(encoding: [UInt8], tag: ASN1Tag) throws {
        #expect(try ASN1Node.parse(encoding, rules: .der).tag == tag)
    }

    @Test(
        "high tag numbers are read from base-128 octets after 0x1F",
        arguments: [
            (hex("9F 1F 00"), ASN1Tag.contextSpecific(31, constructed: false)),
            (hex("9F 7F 00"), ASN1Tag.contextSpecific(127, constructed: false)),
            (hex("BF 81 00 00"), ASN1Tag.contextSpecific(128, constructed: true)),
            (hex("5F 81 80 00 00"), ASN1Tag(.application, number: 16384, constructed: false)),
            (hex("1F FF 7F 00"), ASN1Tag(.universal, number: 16383, constructed: false)),
            (hex("DF FF FF FF 7F 00"), ASN1Tag(.private, number: 0x0FFF_FFFF, constructed: false)),
            (hex("DF 81 80 80 80 00 00"), ASN1Tag(.private, number: 0x1000_0000, constructed: false)),
            (hex("9F 8F FF FF FF 7F 00"), ASN1Tag.contextSpecific(UInt32.max, constructed: false)),
        ])
    func highTagNumbers(encoding: [UInt8], tag: ASN1Tag) throws {
        let node = try ASN1Node.parse(encoding, rules: .der)
        #expect(node.tag == tag)
        #expect(node.content.isEmpty)
    }

    @Test(
        "malformed high tag numbers are rejected",
        arguments: [
            // The first base-128 octet may not be 0x80: that is padding.
            (hex("9F 80 01 00"), DERError(.invalidTagNumber, at: 1)),
            (hex("9F 80 80 1F 00"), DERError(.invalidTagNumber, at: 1)),
            // Numbers below 31 must use the one-octet form.
            (hex("9F 1E 00"), DERError(.invalidTagNumber, at: 0)),
            (hex("9F 00 00"), DERError(.invalidTagNumber, at: 0)),
            (hex("3F 10 00"), DERError(.invalidTagNumber, at: 0)),
            // A number that does not fit in 32 bits.
            (hex("9F 90 80 80 80 00 00"), DERError(.invalidTagNumber, at: 5)),
            (hex("9F 81 80 80 80 80 00 00"), DERError(.invalidTagNumber, at: 6)),
            // The base-128 octets stop before the last one (bit 8 clear) arrives.
            (hex("9F 81"), DERError(.truncated, at: 2)),
            (hex("9F"), DERError(.truncated, at: 1)),
        ] as [([UInt8], DERError)])
    func malformedHighTagNumbers(encoding: [UInt8], expected: DERError) {
        #expect(throws: expected) { try ASN1Node.parse(encoding, rules: .der) }
        #expect(throws: expected) { try ASN1Node.parse(encoding, rules: .ber) }
    }

    @Test("readNode(expecting:) rejects another tag, at the offset of that element")
    func readNodeExpectingOtherTag() {
        var reader = ASN1Reader(hex("05 00 02 01 01")[...], rules: .der)
        #expect(throws: DERError(.unexpectedTag(expected: .null, found: .integer), at: 2)) {
            _ = try reader.readNode(expecting: .null)
            _ = try reader.readNode(expecting: .null)
        }
    }

    @Test("the same number in the other form or class is another tag")
    func formAndClassDistinguishTags() {
        let primitive = ASN1Tag.contextSpecific(0, constructed: false)
        let constructed = ASN1Tag.contextSpecific(0, constructed: true)
        var reader = ASN1Reader(hex("A0 00")[...], rules: .der)
        #expect(throws: DERError(.unexpectedTag(expected: primitive, found: constructed), at: 0)) {
            try reader.readNode(expecting: primitive)
        }
        #expect(ASN1Tag.sequence != ASN1Tag(.universal, number: 16, constructed: false))
        #expect(ASN1Tag.contextSpecific(2, constructed: false) != ASN1Tag(.application, number: 2, constructed: false))
    }

    @Test("an optional element that is absent leaves the reader where it was")
    func optionalElementAbsent() throws {
        var reader = ASN1Reader(hex("A1 03 02 01 07")[...], rules: .der)
        #expect(try reader.readOptionalNode(.contextSpecific(0, constructed: true)) == nil)
        #expect(reader.offset == 0)
        #expect(try reader.peekTag() == .contextSpecific(1, constructed: true))
        let present = try reader.readOptionalNode(.contextSpecific(1, constructed: true))
        #expect(present?.content.count == 3)
        #expect(reader.isAtEnd)
        #expect(try reader.peekTag() == nil)
    }

    @Test("tags describe themselves in ASN.1 notation")
    func tagDescriptions() {
        #expect(ASN1Tag.sequence.description == "SEQUENCE")
        #expect(ASN1Tag.octetString.toggledForm.description == "OCTET STRING (constructed)")
        #expect(ASN1Tag.contextSpecific(0, constructed: true).description == "[0]")
        #expect(ASN1Tag(.application, number: 17, constructed: true).description == "[APPLICATION 17]")
    }
}
