import ReceiptDER
import Testing

/// Reads `encoding` as one INTEGER into `T`.
private func integer<T: FixedWidthInteger>(_ encoding: [UInt8], as type: T.Type) throws(DERError) -> T {
    var reader = ASN1Reader(encoding[...], rules: .der)
    let value = try reader.readInteger(T.self)
    try reader.finish()
    return value
}

@Suite("INTEGER (X.690 §8.3)")
struct IntegerTests {
    @Test(
        "an INTEGER must be non-empty and in its shortest two's-complement form",
        arguments: [
            hex("02 00"),
            hex("02 02 00 7F"),
            hex("02 02 00 00"),
            hex("02 03 00 00 80"),
            hex("02 02 FF 80"),
            hex("02 02 FF FF"),
            hex("02 03 FF FF 7F"),
        ])
    func nonMinimalIntegers(encoding: [UInt8]) {
        for rules in [EncodingRules.der, .ber] {
            var reader = ASN1Reader(encoding[...], rules: rules)
            #expect(throws: DERError(.invalidInteger, at: 0)) { try reader.readIntegerBytes() }
        }
        #expect(throws: DERError(.invalidInteger, at: 0)) { try integer(encoding, as: Int64.self) }
    }

    @Test(
        "a leading 00 or FF octet is allowed when the next octet needs it for the sign",
        arguments: [
            (hex("02 02 00 80"), 128),
            (hex("02 02 00 FF"), 255),
            (hex("02 02 FF 7F"), -129),
            (hex("02 02 FF 00"), -256),
            (hex("02 01 00"), 0),
            (hex("02 01 FF"), -1),
            (hex("02 01 7F"), 127),
            (hex("02 01 80"), -128),
        ] as [([UInt8], Int64)])
    func minimalSignOctets(encoding: [UInt8], value: Int64) throws {
        #expect(try integer(encoding, as: Int64.self) == value)
    }

    @Test("readIntegerBytes returns the two's-complement content octets")
    func integerBytes() throws {
        var reader = ASN1Reader(hex("02 09 00 FF FF FF FF FF FF FF FF")[...], rules: .der)
        #expect(Array(try reader.readIntegerBytes()) == hex("00 FF FF FF FF FF FF FF FF"))
    }

    @Test(
        "Int64 reads values up to its edges",
        arguments: [
            (hex("02 08 7F FF FF FF FF FF FF FF"), Int64.max),
            (hex("02 08 80 00 00 00 00 00 00 00"), Int64.min),
            (hex("02 08 80 00 00 00 00 00 00 01"), Int64.min + 1),
            (hex("02 04 7F FF FF FF"), Int64(Int32.max)),
            (hex("02 05 00 80 00 00 00"), Int64(Int32.max) + 1),
        ])
    func int64Edges(encoding: [UInt8], value: Int64) throws {
        #expect(try integer(encoding, as: Int64.self) == value)
    }

    @Test(
        "UInt64 reads values up to its edges, including 2^63 and above in nine octets",
        arguments: [
            (hex("02 01 00"), UInt64(0)),
            (hex("02 08 7F FF FF FF FF FF FF FF"), UInt64(Int64.max)),
            (hex("02 09 00 80 00 00 00 00 00 00 00"), UInt64(1) << 63),
            (hex("02 09 00 FF FF FF FF FF FF FF FF"), UInt64.max),
        ])
    func uint64Edges(encoding: [UInt8], value: UInt64) throws {
        #expect(try integer(encoding, as: UInt64.self) == value)
    }

    @Test("Int8 and UInt8 read their whole ranges and nothing beyond")
    func smallIntegers() throws {
        #expect(try integer(hex("02 01 7F"), as: Int8.self) == Int8.max)
        #expect(try integer(hex("02 01 80"), as: Int8.self) == Int8.min)
        #expect(try integer(hex("02 02 00 FF"), as: UInt8.self) == UInt8.max)
        #expect(throws: DERError(.integerOutOfRange, at: 0)) { try integer(hex("02 02 00 80"), as: Int8.self) }
        #expect(throws: DERError(.integerOutOfRange, at: 0)) { try integer(hex("02 02 FF 7F"), as: Int8.self) }
        #expect(throws: DERError(.integerOutOfRange, at: 0)) { try integer(hex("02 02 01 00"), as: UInt8.self) }
    }

    @Test(
        "a value outside Int64 is out of range",
        arguments: [
            hex("02 09 00 80 00 00 00 00 00 00 00"),
            hex("02 09 FF 7F FF FF FF FF FF FF FF"),
            hex("02 09 01 00 00 00 00 00 00 00 00"),
            hex("02 10 7F FF FF FF FF FF FF FF FF FF FF FF FF FF FF FF"),
        ])
    func int64OutOfRange(encoding: [UInt8]) {
        #expect(throws: DERError(.integerOutOfRange, at: 0)) { try integer(encoding, as: Int64.self) }
    }

    @Test("a value of 2^64 or more is out of range for UInt64")
    func uint64OutOfRange() {
        #expect(throws: DERError(.integerOutOfRange, at: 0)) {
            try integer(hex("02 09 01 00 00 00 00 00 00 00 00"), as: UInt64.self)
        }
        #expect(throws: DERError(.integerOutOfRange, at: 0)) {
            try integer(hex("02 0A 00 80 00 00 00 00 00 00 00 00"), as: UInt64.self)
        }
    }

    @Test(
        "a negative value never fits an unsigned type",
        arguments: [hex("02 01 FF"), hex("02 01 80"), hex("02 08 80 00 00 00 00 00 00 00")])
    func negativeIntoUnsigned(encoding: [UInt8]) {
        #expect(throws: DERError(.integerOutOfRange, at: 0)) { try integer(encoding, as: UInt64.self) }
        #expect(throws: DERError(.integerOutOfRange, at: 0)) { try integer(encoding, as: UInt8.self) }
    }

    @Test("an element that is not an INTEGER is rejected")
    func otherTagIsNotAnInteger() {
        #expect(throws: DERError(.unexpectedTag(expected: .integer, found: .octetString), at: 0)) {
            try integer(hex("04 01 05"), as: Int.self)
        }
        #expect(throws: DERError(.unexpectedTag(expected: .integer, found: .octetString), at: 0)) {
            try ASN1Node.parse(hex("04 01 05"), rules: .der).integerValue(Int.self)
        }
    }

    @Test(
        "DERSpanReader.integer reads what element then int64 read, with the same errors, within the limit",
        arguments: [
            hex("02 01 00"), hex("02 01 80"), hex("02 02 00 80"), hex("02 02 FF 7F"),
            hex("02 08 7F FF FF FF FF FF FF FF"),
            hex("02 08 80 00 00 00 00 00 00 00"), hex("02 00"), hex("02 02 00 7F"), hex("02 02 FF 80"),
            hex("02 09 00 80 00 00 00 00 00 00 00"), hex("02 81 01 05"), hex("02 03 01 02"), hex("02"), hex(""),
            hex("04 01 05"), hex("22 03 02 01 05"), hex("9F 1F 01 00"),
        ])
    func spanIntegerAgreesWithElementReading(encoding: [UInt8]) {
        let padded = hex("AA") + encoding + hex("02 01 07")
        let span = padded.span
        func stepwise() throws(DERError) -> (Int64, Int) {
            let element = try DERSpanReader.element(
                in: span, at: 1, limit: 1 + encoding.count, base: 100, expecting: .integer)
            return (try DERSpanReader.int64(in: span, element, base: 100), element.end)
        }
        func combined() throws(DERError) -> (Int64, Int) {
            let (value, end) = try DERSpanReader.integer(in: span, at: 1, limit: 1 + encoding.count, base: 100)
            return (value, end)
        }
        switch (Result(catching: stepwise), Result(catching: combined)) {
        case (.success(let expected), .success(let read)): #expect(read == expected)
        case (.failure(let expected), .failure(let read)): #expect(read == expected)
        case (let expected, let read): Issue.record("element then int64 gave \(expected), integer gave \(read)")
        }
    }

    @Test(
        "DERSpanReader.int64(ifMinimal:) gives what int64 reads from the same content octets, or nil where it throws",
        arguments: [
            hex("02 01 00"), hex("02 01 7F"), hex("02 01 80"), hex("02 02 00 80"), hex("02 02 FF 7F"),
            hex("02 02 00 7F"), hex("02 02 FF 80"), hex("02 03 01 02 03"), hex("02 08 7F FF FF FF FF FF FF FF"),
            hex("02 08 80 00 00 00 00 00 00 00"), hex("02 09 00 80 00 00 00 00 00 00 00"), hex("02 00"),
        ])
    func minimalInt64AgreesWithInt64(encoding: [UInt8]) throws {
        let element = try DERSpanReader.element(in: encoding.span, at: 0, limit: encoding.count)
        let quick = DERSpanReader.int64(ifMinimal: element.contentStart..<element.end, in: encoding.span)
        #expect(quick == (try? DERSpanReader.int64(in: encoding.span, element)))
    }
}
