import ReceiptDER
import Testing

/// The number of content octets of the shortest two's-complement form of `value`, worked out from its bit count.
private func minimalOctetCount(_ value: Int64) -> Int {
    let significantBits = 64 - (value < 0 ? ~value : value).leadingZeroBitCount + 1  // plus the sign bit
    return (significantBits + 7) / 8
}

/// Values that cross every octet boundary, both signs, and the ends of the range.
private let spreadOfInt64Values: [Int64] = {
    var values: [Int64] = [0, -1, 1, 127, 128, -128, -129, 255, 256, -256, -257, .max, .min, .max - 1, .min + 1]
    for shift in 1..<63 {
        let power = Int64(1) << shift
        values += [power - 1, power, power + 1, -power, -power - 1, -power + 1]
    }
    return values
}()

@Suite("DERWriter")
struct DERWriterTests {
    @Test(
        "integers are written in their shortest two's-complement form",
        arguments: [
            (0, hex("02 01 00")),
            (1, hex("02 01 01")),
            (-1, hex("02 01 FF")),
            (127, hex("02 01 7F")),
            (128, hex("02 02 00 80")),
            (-128, hex("02 01 80")),
            (-129, hex("02 02 FF 7F")),
            (256, hex("02 02 01 00")),
            (Int64.max, hex("02 08 7F FF FF FF FF FF FF FF")),
            (Int64.min, hex("02 08 80 00 00 00 00 00 00 00")),
        ] as [(Int64, [UInt8])])
    func knownIntegerEncodings(value: Int64, encoding: [UInt8]) {
        var writer = DERWriter()
        writer.appendInteger(value)
        #expect(writer.bytes == encoding)
    }

    @Test("every Int64 written reads back as itself from its shortest form", arguments: spreadOfInt64Values)
    func int64RoundTrip(value: Int64) throws {
        var writer = DERWriter()
        writer.appendInteger(value)
        #expect(writer.bytes.count == 2 + minimalOctetCount(value))
        var reader = ASN1Reader(writer.bytes[...], rules: .der)
        #expect(try reader.readInteger(Int64.self) == value)
        try reader.finish()
    }

    @Test("unsigned integers with the top bit set get a leading zero octet")
    func unsignedIntegers() throws {
        var writer = DERWriter()
        writer.appendInteger(UInt64.max)
        writer.appendInteger(UInt64(1) << 63)
        writer.appendInteger(UInt8(0x80))
        writer.appendInteger(UInt64(0))
        #expect(
            writer.bytes
                == hex("02 09 00 FF FF FF FF FF FF FF FF  02 09 00 80 00 00 00 00 00 00 00  02 02 00 80  02 01 00"))
        var reader = ASN1Reader(writer.bytes[...], rules: .der)
        #expect(try reader.readInteger(UInt64.self) == .max)
        #expect(try reader.readInteger(UInt64.self) == 1 << 63)
        #expect(try reader.readInteger(UInt8.self) == 0x80)
        #expect(try reader.readInteger(UInt64.self) == 0)
    }

    @Test(
        "appendInteger(twosComplement:) trims redundant leading octets",
        arguments: [
            (hex("00 00 00 05"), hex("02 01 05")),
            (hex("00 00 80"), hex("02 02 00 80")),
            (hex("FF FF FF 80"), hex("02 01 80")),
            (hex("FF 7F"), hex("02 02 FF 7F")),
            (hex("00"), hex("02 01 00")),
            (hex(""), hex("02 01 00")),
        ])
    func twosComplementTrimming(octets: [UInt8], encoding: [UInt8]) {
        var writer = DERWriter()
        writer.appendInteger(twosComplement: octets)
        #expect(writer.bytes == encoding)
    }

    @Test(
        "lengths use the short form below 128 and the fewest long-form octets above",
        arguments: [
            (0, hex("04 00")),
            (127, hex("04 7F")),
            (128, hex("04 81 80")),
            (255, hex("04 81 FF")),
            (256, hex("04 82 01 00")),
            (65535, hex("04 82 FF FF")),
            (65536, hex("04 83 01 00 00")),
        ])
    func minimalLengths(length: Int, header: [UInt8]) throws {
        var writer = DERWriter()
        writer.appendOctetString([UInt8](repeating: 0x5A, count: length))
        #expect(Array(writer.bytes.prefix(header.count)) == header)
        #expect(writer.bytes.count == header.count + length)
        var reader = ASN1Reader(writer.bytes[...], rules: .der)
        #expect(try reader.readOctetString().count == length)
    }

    @Test("appendSetOf writes its elements in ascending order of their encodings")
    func setOfIsSorted() {
        var writer = DERWriter()
        writer.appendSetOf([hex("02 01 03"), hex("04 02 00 00"), hex("02 01 01"), hex("04 01 FF"), hex("02 01 02")])
        #expect(writer.bytes == hex("31 10 02 01 01 02 01 02 02 01 03 04 01 FF 04 02 00 00"))
    }

    @Test("appendSetOf gives the same bytes whatever order the elements come in")
    func setOfIgnoresInputOrder() {
        let elements = [hex("0C 01 62"), hex("0C 01 61"), hex("0C 02 61 61"), hex("05 00")]
        var expected = DERWriter()
        expected.appendSetOf(elements)
        for rotation in 1..<elements.count {
            var writer = DERWriter()
            writer.appendSetOf(Array(elements[rotation...] + elements[..<rotation]))
            #expect(writer.bytes == expected.bytes)
        }
        #expect(expected.bytes == hex("31 0C 05 00 0C 01 61 0C 01 62 0C 02 61 61"))
    }

    @Test(
        "high tag numbers are written in base 128 and read back",
        arguments: [
            (ASN1Tag.contextSpecific(30, constructed: false), hex("9E 00")),
            (ASN1Tag.contextSpecific(31, constructed: false), hex("9F 1F 00")),
            (ASN1Tag.contextSpecific(127, constructed: true), hex("BF 7F 00")),
            (ASN1Tag(.application, number: 128, constructed: false), hex("5F 81 00 00")),
            (ASN1Tag(.private, number: 16384, constructed: true), hex("FF 81 80 00 00")),
            (ASN1Tag(.universal, number: 0x0FFF_FFFF, constructed: false), hex("1F FF FF FF 7F 00")),
            (ASN1Tag.contextSpecific(UInt32.max, constructed: false), hex("9F 8F FF FF FF 7F 00")),
        ])
    func highTagNumbers(tag: ASN1Tag, encoding: [UInt8]) throws {
        var writer = DERWriter()
        writer.append(tag, content: [])
        #expect(writer.bytes == encoding)
        #expect(try ASN1Node.parse(writer.bytes, rules: .der).tag == tag)
    }

    @Test("a structure built with the writer reads back field by field under DER")
    func writtenStructureReadsBack() throws {
        let signedData = try #require(ASN1ObjectIdentifier("1.2.840.113549.1.7.2"))
        var writer = DERWriter()
        writer.appendSequence { outer in
            outer.appendInteger(-1)
            outer.appendObjectIdentifier(signedData)
            outer.appendConstructed(.contextSpecific(0, constructed: true)) { explicit in
                explicit.appendOctetString([UInt8](repeating: 0xAB, count: 200))
            }
            outer.appendUTF8String("h\u{E9}")
            outer.appendIA5String("a@b.c")
            outer.appendNull()
            outer.appendSetOf([hex("02 01 02"), hex("02 01 01")])
            outer.appendEncoded(hex("01 01 FF"))
        }

        var reader = ASN1Reader(writer.bytes[...], rules: .der)
        var sequence = try reader.readSequence()
        try reader.finish()
        #expect(try sequence.readInteger(Int.self) == -1)
        #expect(try sequence.readObjectIdentifier() == signedData)
        var explicit = try sequence.readNode(expecting: .contextSpecific(0, constructed: true)).children()
        #expect(Array(try explicit.readOctetString()) == [UInt8](repeating: 0xAB, count: 200))
        try explicit.finish()
        #expect(try sequence.readNode(expecting: .utf8String).utf8String() == "h\u{E9}")
        #expect(try sequence.readNode(expecting: .ia5String).ia5String() == "a@b.c")
        try sequence.readNull()
        var set = try sequence.readSet()
        #expect(try set.readInteger(Int.self) == 1)
        #expect(try set.readInteger(Int.self) == 2)
        try set.finish()
        #expect(Array(try sequence.readNode(expecting: .boolean).content) == [0xFF])
        try sequence.finish()

        #expect(try DERTree(parsing: writer.bytes, rules: .der).derEncoding == writer.bytes)
    }

    @Test(
        "the span writer fills exactly the measured size with the bytes DERWriter writes",
        arguments: [
            (ASN1Tag.octetString, 0), (.octetString, 127), (.sequence, 128), (.set, 65_536),
            (.contextSpecific(31, constructed: true), 300),
            (ASN1Tag(.private, number: UInt32.max, constructed: false), 5),
        ] as [(ASN1Tag, Int)])
    func spanWriterMatchesDERWriter(tag: ASN1Tag, length: Int) {
        var writer = DERWriter()
        writer.appendHeader(tag, length: length)
        for value in spreadOfInt64Values { writer.appendInteger(value) }
        let integersLength = spreadOfInt64Values.reduce(0) {
            $0 + DERWriter.encodedLength(contentLength: DERWriter.integerContentLength($1))
        }
        let headerLength = writer.bytes.count - integersLength
        let written = [UInt8](capacity: headerLength + integersLength) { output in
            output.appendDERHeader(tag, length: length)
            for value in spreadOfInt64Values { output.appendDERInteger(value) }
            #expect(output.freeCapacity == 0)
        }
        #expect(written == writer.bytes)
    }
}
