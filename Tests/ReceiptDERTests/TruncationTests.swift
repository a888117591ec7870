import ReceiptDER
import Testing

@Suite("Truncated input and lengths beyond the data")
struct TruncationTests {
    /// SEQUENCE { INTEGER 5, SEQUENCE { OID 1.2.840.113549.1.7.2, [0] { OCTET STRING "ABCD" } }, NULL }
    static let nestedDER = hex("30 1A 02 01 05 30 13 06 09 2A 86 48 86 F7 0D 01 07 02 A0 06 04 04 41 42 43 44 05 00")

    /// SEQUENCE { INTEGER 5, OCTET STRING of 128 bytes }: its prefixes also cut through long-form lengths.
    static let longFormDER = hex("30 81 86 02 01 05 04 81 80") + [UInt8](repeating: 0x41, count: 128)

    /// The same shape as `nestedDER` in BER, with indefinite lengths and a constructed OCTET STRING.
    static let nestedBER = hex("30 80 02 01 05 24 80 04 02 41 42 24 80 04 01 43 00 00 00 00 00 00")

    @Test("the complete vectors are well formed")
    func completeVectorsParse() throws {
        #expect(try walk(Self.nestedDER, rules: .der) == 7)
        #expect(try walk(Self.longFormDER, rules: .der) == 3)
        #expect(try walk(Self.nestedBER, rules: .ber) == 6)
    }

    @Test("every proper prefix of a DER structure is rejected as truncated", arguments: [nestedDER, longFormDER])
    func everyPrefixOfDERIsTruncated(encoding: [UInt8]) {
        for end in 0..<encoding.count {
            let error = #expect(throws: DERError.self, "prefix of \(end) bytes") {
                try walk(Array(encoding[..<end]), rules: .der)
            }
            #expect(error?.reason == .truncated, "prefix of \(end) bytes")
        }
    }

    @Test("every proper prefix of a real certificate is rejected as truncated")
    func everyPrefixOfCertificateIsTruncated() throws {
        let certificate = try TestVectors.bytes("AppleIncRootCertificate.cer")
        for end in 0..<certificate.count {
            let error = #expect(throws: DERError.self) { try walk(Array(certificate[..<end]), rules: .der) }
            #expect(error?.reason == .truncated, "prefix of \(end) bytes")
        }
    }

    @Test("every proper prefix of a BER structure with indefinite lengths is rejected")
    func everyPrefixOfBERIsRejected() {
        let encoding = Self.nestedBER
        for end in 0..<encoding.count {
            let error = #expect(throws: DERError.self, "prefix of \(end) bytes") {
                try walk(Array(encoding[..<end]), rules: .ber)
            }
            let reason = error?.reason
            #expect(reason == .truncated || reason == .missingEndOfContents, "prefix of \(end) bytes")
        }
    }

    /// A reader that allocated what a length claims would crash or crawl on these; the reader checks the claim
    /// against the bytes that are really there first.
    @Test(
        "a length that claims more bytes than exist is rejected before anything is allocated",
        arguments: [
            (hex("04 05 41 42"), DERError(.truncated, at: 0)),
            (hex("04 84 FF FF FF FF"), DERError(.truncated, at: 0)),
            (hex("04 84 FF FF FF FF 41 42 43"), DERError(.truncated, at: 0)),
            (hex("30 84 FF FF FF FF 05 00"), DERError(.truncated, at: 0)),
            (hex("04 88 7F FF FF FF FF FF FF FF"), DERError(.truncated, at: 0)),
            (hex("04 88 7F FF FF FF FF FF FF FF 41"), DERError(.truncated, at: 0)),
            (hex("04 84 FF FF FF"), DERError(.truncated, at: 1)),
            (hex("04 88 80 00 00 00 00 00 00 00"), DERError(.lengthOverflow, at: 1)),
            (hex("04 88 FF FF FF FF FF FF FF FF"), DERError(.lengthOverflow, at: 1)),
            (hex("04 89 01 00 00 00 00 00 00 00 00"), DERError(.lengthOverflow, at: 1)),
            (hex("04 FE") + [UInt8](repeating: 0xFF, count: 126), DERError(.lengthOverflow, at: 1)),
        ] as [([UInt8], DERError)])
    func oversizedLength(encoding: [UInt8], expected: DERError) {
        #expect(throws: expected) { try ASN1Node.parse(encoding, rules: .der) }
        #expect(throws: expected) { try ASN1Node.parse(encoding, rules: .ber) }
    }

    @Test("a child cannot claim bytes beyond the end of its parent, even when the buffer has them")
    func childLengthBeyondParent() {
        // SEQUENCE { SEQUENCE { OCTET STRING claiming 5 bytes with 1 left }, OCTET STRING "B" }
        let encoding = hex("30 08 30 03 04 05 41 04 01 42")
        #expect(throws: DERError(.truncated, at: 4)) { try walk(encoding, rules: .der) }
    }
}
