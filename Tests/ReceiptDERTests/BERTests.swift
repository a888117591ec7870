import ReceiptDER
import Testing

@Suite("BER: indefinite lengths and constructed strings (X.690 §8.1.3.6, §8.7.3)")
struct BERTests {
    @Test("an indefinite-length SEQUENCE ends at its end-of-contents marker")
    func indefiniteLengthSequence() throws {
        let node = try ASN1Node.parse(hex("30 80 02 01 05 00 00"), rules: .ber)
        #expect(node.tag == .sequence)
        #expect(node.isIndefiniteLength)
        #expect(Array(node.content) == hex("02 01 05"))
        #expect(node.encoded.count == 7)
        var children = try node.children()
        #expect(try children.readInteger(Int.self) == 5)
        try children.finish()
    }

    @Test("an empty indefinite-length SEQUENCE is just its header and end-of-contents marker")
    func emptyIndefiniteLengthSequence() throws {
        let node = try ASN1Node.parse(hex("30 80 00 00"), rules: .ber)
        #expect(node.content.isEmpty)
        #expect(try node.children().isAtEnd)
    }

    @Test("nested indefinite-length elements each end at their own end-of-contents marker")
    func nestedIndefiniteLengths() throws {
        // SEQUENCE { SEQUENCE { INTEGER 1 }, INTEGER 2 }, both SEQUENCEs indefinite.
        let node = try ASN1Node.parse(hex("30 80 30 80 02 01 01 00 00 02 01 02 00 00"), rules: .ber)
        var outer = try node.children()
        let innerNode = try outer.readNode(expecting: .sequence)
        #expect(innerNode.isIndefiniteLength)
        #expect(innerNode.offset == 2)
        #expect(innerNode.encoded.count == 7)
        var inner = try innerNode.children()
        #expect(try inner.readInteger(Int.self) == 1)
        try inner.finish()
        #expect(try outer.readInteger(Int.self) == 2)
        try outer.finish()
    }

    @Test("the element after an indefinite-length element is read from after its end-of-contents marker")
    func elementAfterIndefiniteLength() throws {
        var reader = ASN1Reader(hex("A0 80 05 00 00 00 02 01 07")[...], rules: .ber)
        let wrapper = try reader.readNode(expecting: .contextSpecific(0, constructed: true))
        #expect(wrapper.encoded.count == 6)
        #expect(try reader.readInteger(Int.self) == 7)
        try reader.finish()
    }

    @Test("an indefinite-length element whose end-of-contents marker never comes is rejected")
    func missingEndOfContents() {
        #expect(throws: DERError(.missingEndOfContents, at: 2)) {
            try ASN1Node.parse(hex("30 80 02 01 05"), rules: .ber)
        }
        #expect(throws: DERError(.missingEndOfContents, at: 4)) {
            try ASN1Node.parse(hex("30 80 30 80 02 01 05"), rules: .ber)
        }
    }

    @Test("an end-of-contents marker with a non-zero length is rejected")
    func endOfContentsWithContent() {
        #expect(throws: DERError(.unexpectedEndOfContents, at: 5)) {
            try ASN1Node.parse(hex("30 80 02 01 05 00 01 00 00 00"), rules: .ber)
        }
    }

    @Test(
        "a constructed OCTET STRING is the concatenation of its chunks",
        arguments: [
            hex("24 08 04 02 41 42 04 02 43 44"),
            hex("24 80 04 02 41 42 04 02 43 44 00 00"),
            hex("24 80 04 01 41 24 80 04 01 42 04 01 43 00 00 04 01 44 00 00"),
            hex("24 10 24 06 04 01 41 04 01 42 24 80 04 02 43 44 00 00"),
            hex("24 0A 04 00 04 04 41 42 43 44 04 00"),
        ])
    func constructedOctetString(encoding: [UInt8]) throws {
        var reader = ASN1Reader(encoding[...], rules: .ber)
        #expect(Array(try reader.readOctetString()) == Array("ABCD".utf8))
        try reader.finish()
    }

    @Test("an empty constructed OCTET STRING is empty")
    func emptyConstructedOctetString() throws {
        var reader = ASN1Reader(hex("24 00")[...], rules: .ber)
        #expect(try reader.readOctetString().isEmpty)
    }

    @Test("a primitive OCTET STRING is returned as a slice of the input, without copying")
    func primitiveOctetStringIsASlice() throws {
        let buffer = hex("30 06 04 04 41 42 43 44")
        var sequence = try ASN1Node.parse(buffer, rules: .der).children()
        let octets = try sequence.readOctetString()
        #expect(octets.indices == 4..<8)
        #expect(Array(octets) == Array("ABCD".utf8))
    }

    @Test("DER rejects a constructed OCTET STRING")
    func derRejectsConstructedOctetString() {
        var reader = ASN1Reader(hex("30 0A 02 01 01 24 05 04 03 41 42 43")[...], rules: .der)
        #expect(throws: DERError(.constructedStringNotAllowed, at: 5)) {
            var sequence = try reader.readSequence()
            _ = try sequence.readInteger(Int.self)
            _ = try sequence.readOctetString()
        }
    }

    @Test(
        "a chunk of a constructed OCTET STRING that is not an OCTET STRING is rejected",
        arguments: [
            (hex("24 06 04 01 41 02 01 00"), ASN1Tag.integer, 5),
            (hex("24 03 0C 01 41"), ASN1Tag.utf8String, 2),
            (hex("24 80 04 01 41 30 00 00 00"), ASN1Tag.sequence, 5),
        ])
    func chunkOfWrongType(encoding: [UInt8], chunkTag: ASN1Tag, chunkOffset: Int) {
        var reader = ASN1Reader(encoding[...], rules: .ber)
        #expect(throws: DERError(.unexpectedTag(expected: .octetString, found: chunkTag), at: chunkOffset)) {
            try reader.readOctetString()
        }
    }

    @Test("readOctetString rejects an element that is not an OCTET STRING")
    func readOctetStringRejectsOtherTags() {
        var reader = ASN1Reader(hex("0C 01 41")[...], rules: .ber)
        #expect(throws: DERError(.unexpectedTag(expected: .octetString, found: .utf8String), at: 0)) {
            try reader.readOctetString()
        }
    }
}
