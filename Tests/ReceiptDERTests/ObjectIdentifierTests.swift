import ReceiptDER
import Testing

@Suite("OBJECT IDENTIFIER (X.690 §8.19)")
struct ObjectIdentifierTests {
    static let knownEncodings: [(dotted: String, content: [UInt8])] = [
        ("1.2.840.113549.1.7.2", hex("2A 86 48 86 F7 0D 01 07 02")),  // CMS signedData
        ("1.2.840.113549.1.1.11", hex("2A 86 48 86 F7 0D 01 01 0B")),  // sha256WithRSAEncryption
        ("1.2.840.113635.100.6.11.1", hex("2A 86 48 86 F7 63 64 06 0B 01")),  // an Apple arc
        ("2.5.4.3", hex("55 04 03")),  // id-at-commonName
        ("2.999.3", hex("88 37 03")),  // X.690 §8.19.5 example
        ("0.0", hex("00")),
        ("0.39", hex("27")),
        ("1.0", hex("28")),
        ("2.40", hex("78")),
        ("2.48", hex("81 00")),
        ("1.2.127.128.16383.16384", hex("2A 7F 81 00 FF 7F 81 80 00")),
        ("1.2.18446744073709551615", hex("2A 81 FF FF FF FF FF FF FF FF 7F")),
        ("2.18446744073709551535", hex("81 FF FF FF FF FF FF FF FF 7F")),
    ]

    @Test("content octets decode to the known arcs", arguments: knownEncodings)
    func decodesKnownEncodings(dotted: String, content: [UInt8]) throws {
        let identifier = try #require(ASN1ObjectIdentifier(contentOctets: content[...]))
        #expect(identifier.description == dotted)
    }

    @Test("dotted text encodes to the known content octets", arguments: knownEncodings)
    func encodesKnownEncodings(dotted: String, content: [UInt8]) throws {
        let identifier = try #require(ASN1ObjectIdentifier(dotted))
        #expect(identifier.contentOctets == content)
    }

    @Test("content octets survive a round trip through the arcs", arguments: knownEncodings)
    func contentOctetsRoundTrip(dotted: String, content: [UInt8]) throws {
        let identifier = try #require(ASN1ObjectIdentifier(contentOctets: content[...]))
        #expect(identifier.contentOctets == content)
        #expect(ASN1ObjectIdentifier(contentOctets: identifier.contentOctets[...]) == identifier)
    }

    @Test("readObjectIdentifier reads a whole element")
    func readsElement() throws {
        var reader = ASN1Reader(hex("06 09 2A 86 48 86 F7 0D 01 07 02")[...], rules: .der)
        #expect(try reader.readObjectIdentifier() == ASN1ObjectIdentifier(arcs: 1, 2, 840, 113_549, 1, 7, 2))
        #expect(reader.isAtEnd)
    }

    @Test("arcs given in code equal the same identifier parsed from text")
    func arcsInitializer() {
        #expect(ASN1ObjectIdentifier(arcs: 2, 999, 3) == ASN1ObjectIdentifier("2.999.3"))
        #expect(ASN1ObjectIdentifier(arcs: 2, 999, 3).arcs == [2, 999, 3])
    }

    @Test(
        "malformed content octets are rejected",
        arguments: [
            hex(""),  // empty
            hex("80 01"),  // padded first sub-identifier
            hex("2A 80 01"),  // padded later sub-identifier
            hex("2A 86"),  // unterminated
            hex("2A 86 48 86 F7 0D 01 07 82"),  // last octet has bit 8 set
            hex("82 80 80 80 80 80 80 80 80 00"),  // sub-identifier of 2^64
            hex("2A FF FF FF FF FF FF FF FF FF 7F"),  // sub-identifier beyond 2^64
        ])
    func malformedContentOctets(content: [UInt8]) {
        #expect(ASN1ObjectIdentifier(contentOctets: content[...]) == nil)
        var reader = ASN1Reader(([0x06, UInt8(content.count)] + content)[...], rules: .der)
        #expect(throws: DERError(.invalidObjectIdentifier, at: 0)) { try reader.readObjectIdentifier() }
    }

    @Test(
        "malformed dotted text is rejected",
        arguments: [
            "", "1", "1.", ".1", "1..2", "1.2.", "a.b", "1.2.x", "1,2",
            "3.1", "0.40", "1.40",  // the first arc is 0, 1 or 2; below 2 the second is under 40
            "1.+2", "+1.2", "1.-0", "-0.1",  // signs are not digits
            " 1.2", "1.2 ", "1. 2",  // no whitespace
            "1.02", "01.2",  // no leading zeros (RFC 4512 §1.4 numericoid)
            "1.\u{0662}",  // ARABIC-INDIC DIGIT TWO is not an ASCII digit
            "1.2.18446744073709551616",  // an arc beyond UInt64
            "2.18446744073709551536",  // 80 + second arc overflows the first sub-identifier
        ])
    func malformedDottedText(text: String) {
        #expect(ASN1ObjectIdentifier(text) == nil)
    }

    @Test("zero arcs are written as a single 0", arguments: ["0.0", "1.0.0", "2.0"])
    func zeroArcs(text: String) throws {
        let identifier = try #require(ASN1ObjectIdentifier(text))
        #expect(identifier.description == text)
    }
}
