import ReceiptDER
import Testing

@Suite("UTF8String, IA5String and NULL")
struct StringAndNullTests {
    @Test(
        "a UTF8String of valid UTF-8 is read as text",
        arguments: [
            (hex("0C 00"), ""),
            (hex("0C 05 68 65 6C 6C 6F"), "hello"),
            (hex("0C 03 68 C3 A9"), "h\u{E9}"),
            (hex("0C 04 F0 9F 98 80"), "\u{1F600}"),
            (hex("0C 03 EF BF BD"), "\u{FFFD}"),
        ])
    func validUTF8(encoding: [UInt8], text: String) throws {
        #expect(try ASN1Node.parse(encoding, rules: .der).utf8String() == text)
    }

    @Test(
        "a UTF8String that is not valid UTF-8 is rejected",
        arguments: [
            hex("C0 AF"),  // overlong encoding of '/'
            hex("E0 80 AF"),  // overlong three-octet form
            hex("ED A0 80"),  // UTF-16 surrogate U+D800
            hex("F4 90 80 80"),  // beyond U+10FFFF
            hex("80"),  // continuation octet with no lead
            hex("E2 82"),  // sequence cut short
            hex("68 69 FF"),  // never valid
        ])
    func invalidUTF8(content: [UInt8]) throws {
        let node = try ASN1Node.parse([0x0C, UInt8(content.count)] + content, rules: .der)
        #expect(throws: DERError(.invalidString(.utf8String), at: 0)) { try node.utf8String() }
    }

    @Test("an IA5String of 7-bit ASCII is read as text")
    func validIA5String() throws {
        #expect(try ASN1Node.parse(hex("16 05 61 40 62 2E 63"), rules: .der).ia5String() == "a@b.c")
        #expect(try ASN1Node.parse(hex("16 02 00 7F"), rules: .der).ia5String() == "\u{0}\u{7F}")
    }

    @Test("an IA5String with an octet of 0x80 or more is rejected", arguments: [hex("80"), hex("41 FF"), hex("C3 A9")])
    func invalidIA5String(content: [UInt8]) throws {
        let node = try ASN1Node.parse([0x16, UInt8(content.count)] + content, rules: .der)
        #expect(throws: DERError(.invalidString(.ia5String), at: 0)) { try node.ia5String() }
    }

    @Test("a string reader rejects an element of another string type")
    func stringTypesAreDistinct() throws {
        let ia5 = try ASN1Node.parse(hex("16 01 41"), rules: .der)
        #expect(throws: DERError(.unexpectedTag(expected: .utf8String, found: .ia5String), at: 0)) {
            try ia5.utf8String()
        }
        let utf8 = try ASN1Node.parse(hex("0C 01 41"), rules: .der)
        #expect(throws: DERError(.unexpectedTag(expected: .ia5String, found: .utf8String), at: 0)) {
            try utf8.ia5String()
        }
    }

    @Test("NULL has no content")
    func null() throws {
        var reader = ASN1Reader(hex("05 00")[...], rules: .der)
        try reader.readNull()
        #expect(reader.isAtEnd)
    }

    @Test("a NULL with content is rejected", arguments: [hex("05 01 00"), hex("05 02 00 00")])
    func nullWithContent(encoding: [UInt8]) {
        var reader = ASN1Reader(encoding[...], rules: .der)
        #expect(throws: DERError(.invalidNull, at: 0)) { try reader.readNull() }
    }
}
