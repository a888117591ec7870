import ReceiptDER
import Testing

/// `count` content octets to put after a length field in a vector.
private func filler(_ count: Int) -> [UInt8] { [UInt8](repeating: 0x41, count: count) }

@Suite("Length octets and element boundaries (X.690 §8.1.3, §10.1)")
struct LengthTests {
    @Test("a short-form length gives the content octets that follow it")
    func shortFormLength() throws {
        let node = try ASN1Node.parse(hex("04 03 41 42 43 "), rules: .der)
        #expect(node.tag == .octetString)
        #expect(Array(node.content) == hex("41 42 43"))
        #expect(node.encoded.count == 5)
        #expect(!node.isIndefiniteLength)
    }

    @Test(
        "DER accepts the long form only for lengths of 128 or more, in the fewest octets",
        arguments: [
            (hex("04 81 80") + filler(128), 128),
            (hex("04 81 FF") + filler(255), 255),
            (hex("04 82 01 00") + filler(256), 256),
            (hex("04 83 01 00 00") + filler(65536), 65536),
        ])
    func derLongFormLength(encoding: [UInt8], length: Int) throws {
        let node = try ASN1Node.parse(encoding, rules: .der)
        #expect(node.content.count == length)
    }

    @Test(
        "DER rejects the long form for a length below 128",
        arguments: [
            hex("04 81 03 41 42 43"),
            hex("04 81 00"),
            hex("04 81 7F") + filler(127),
            hex("04 82 00 03 41 42 43"),
        ])
    func derRejectsLongFormForShortLength(encoding: [UInt8]) {
        #expect(throws: DERError(.nonMinimalLength, at: 1)) { try ASN1Node.parse(encoding, rules: .der) }
    }

    @Test("DER rejects a long-form length with a leading zero octet")
    func derRejectsLeadingZeroLengthOctet() {
        let encoding = hex("04 82 00 80") + filler(128)
        #expect(throws: DERError(.nonMinimalLength, at: 1)) { try ASN1Node.parse(encoding, rules: .der) }
    }

    @Test(
        "BER accepts long-form lengths with leading zero octets or for short lengths",
        arguments: [
            hex("04 81 03 41 42 43"),
            hex("04 82 00 03 41 42 43"),
            hex("04 88 00 00 00 00 00 00 00 03 41 42 43"),
        ])
    func berAcceptsNonMinimalLength(encoding: [UInt8]) throws {
        let node = try ASN1Node.parse(encoding, rules: .ber)
        #expect(Array(node.content) == hex("41 42 43"))
        #expect(node.encoded.count == encoding.count)
    }

    @Test("the length octet 0xFF is reserved under both rules", arguments: [EncodingRules.der, .ber])
    func reservedLengthOctet(rules: EncodingRules) {
        #expect(throws: DERError(.reservedLengthOctet, at: 1)) { try ASN1Node.parse(hex("04 FF 00"), rules: rules) }
    }

    @Test("DER rejects the indefinite length form")
    func derRejectsIndefiniteLength() {
        #expect(throws: DERError(.indefiniteLengthNotAllowed, at: 1)) {
            try ASN1Node.parse(hex("30 80 02 01 05 00 00"), rules: .der)
        }
    }

    @Test("BER rejects the indefinite length form on a primitive element")
    func berRejectsIndefiniteLengthOnPrimitive() {
        #expect(throws: DERError(.indefiniteLengthOnPrimitive, at: 1)) {
            try ASN1Node.parse(hex("04 80 41 00 00"), rules: .ber)
        }
    }

    @Test("an end-of-contents marker is rejected where the length is definite", arguments: [EncodingRules.der, .ber])
    func endOfContentsInDefiniteContext(rules: EncodingRules) {
        #expect(throws: DERError(.unexpectedEndOfContents, at: 0)) { try ASN1Node.parse(hex("00 00"), rules: rules) }
        #expect(throws: DERError(.unexpectedEndOfContents, at: 4)) {
            try walk(hex("30 04 05 00 00 00"), rules: rules)
        }
    }

    @Test("parse rejects bytes after the element", arguments: [EncodingRules.der, .ber])
    func parseRejectsTrailingData(rules: EncodingRules) {
        #expect(throws: DERError(.trailingData, at: 2)) { try ASN1Node.parse(hex("05 00 00"), rules: rules) }
        #expect(throws: DERError(.trailingData, at: 2)) { try ASN1Node.parse(hex("05 00 05 00"), rules: rules) }
    }

    @Test("finish rejects elements left unread")
    func finishRejectsUnreadElements() throws {
        var sequence = try ASN1Node.parse(hex("30 06 02 01 01 02 01 02"), rules: .der).children()
        #expect(try sequence.readInteger(Int.self) == 1)
        #expect(throws: DERError(.trailingData, at: 5)) { try sequence.finish() }
        #expect(try sequence.readInteger(Int.self) == 2)
        try sequence.finish()
    }

    @Test("an error inside a child gives the offset of the offending byte in the whole buffer")
    func errorOffsetInsideChild() throws {
        // SEQUENCE { INTEGER 1, OCTET STRING with a long-form length of 1 }: the 0x81 is byte 6.
        var sequence = try ASN1Node.parse(hex("30 07 02 01 01 04 81 01 41"), rules: .der).children()
        _ = try sequence.readNode()
        #expect(throws: DERError(.nonMinimalLength, at: 6)) { try sequence.readNode() }
    }

    @Test("offsets count from the start of the original buffer when a slice of it is parsed")
    func errorOffsetInSlice() throws {
        let buffer = hex("FF FF FF FF 04 02 41 42 05 00 00")
        let node = try ASN1Node.parse(buffer[4..<8], rules: .der)
        #expect(node.offset == 4)
        #expect(node.content.startIndex == 6)
        #expect(throws: DERError(.trailingData, at: 10)) { try ASN1Node.parse(buffer[8...], rules: .der) }
    }

    @Test(
        "DERSpanReader.content gives what element reads for its tag within the limit, or nil",
        arguments: [
            hex("04 03 41 42 43"), hex("04 00"), hex("04 81 80") + filler(128), hex("04 82 01 00") + filler(256),
            hex("04 83 01 00 00") + filler(65536), hex("04 81 7F") + filler(127), hex("04 82 00 FF") + filler(255),
            hex("04 80 00 00"), hex("04 FF"), hex("04 04 41 42 43"), hex("04 81"), hex("04 82 01"), hex("04"), hex(""),
            hex("24 03 04 01 41"), hex("02 01 05"), hex("30 03 02 01 05"), hex("9F 1F 01 00"), hex("00 00"),
        ])
    func spanContentAgreesWithElementReading(encoding: [UInt8]) {
        let padded = hex("AA") + encoding + hex("05 00")
        let limit = 1 + encoding.count
        for tag in [ASN1Tag.octetString, .sequence, .integer, .contextSpecific(31, constructed: false)] {
            let quick = DERSpanReader.content(tag, in: padded.span, at: 1, limit: limit)
            let full = try? DERSpanReader.element(in: padded.span, at: 1, limit: limit)
            if let quick {
                #expect(full?.tag == tag && full.map { $0.contentStart..<$0.end } == quick)
            } else if let full, full.tag == tag, tag.number < 31, full.contentStart - full.start <= 4 {
                Issue.record("content gave nothing where element read \(full) for \(tag)")
            }
        }
    }
}
