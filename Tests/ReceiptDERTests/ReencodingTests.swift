import ReceiptDER
import Testing

@Suite("Parsing DER and writing it back gives the same bytes")
struct ReencodingTests {
    @Test(
        "hand-written DER re-encodes byte for byte",
        arguments: [
            hex("05 00"),
            hex("30 00"),
            hex("02 09 00 FF FF FF FF FF FF FF FF"),
            // SEQUENCE { OID 1.2.840.113549.1.7.2, [0] { INTEGER 1 } }
            hex("30 10 06 09 2A 86 48 86 F7 0D 01 07 02 A0 03 02 01 01"),
            // SET { INTEGER 1, INTEGER 2 }
            hex("31 06 02 01 01 02 01 02"),
            // [128] { INTEGER 7 }, [APPLICATION 16384] "", [PRIVATE 31] {}
            hex("BF 81 00 03 02 01 07"), hex("5F 81 80 00 00"), hex("FF 1F 00"),
            // SEQUENCE { SEQUENCE { SEQUENCE { UTF8String "x" } }, BIT STRING, BOOLEAN TRUE }
            hex("30 0E 30 05 30 03 0C 01 78 03 02 00 FF 01 01 FF"),
            // an OCTET STRING whose length needs the long form
            hex("04 81 C8") + [UInt8](repeating: 0xAB, count: 200),
            hex("30 82 01 04 04 81 FF") + [UInt8](repeating: 0xCD, count: 255) + hex("05 00"),
        ])
    func handWrittenVectors(encoding: [UInt8]) throws {
        #expect(try DERTree(parsing: encoding, rules: .der).derEncoding == encoding)
    }

    /// Apple's public root certificate (provenance in `Vectors/SOURCES.md`): a real DER structure with nested
    /// SEQUENCEs and SETs, explicit tags, a BIT STRING, times and long-form lengths.
    @Test("a real certificate re-encodes byte for byte")
    func realCertificate() throws {
        let certificate = try TestVectors.bytes("AppleIncRootCertificate.cer")
        #expect(certificate.count == 1215)
        let tree = try DERTree(parsing: certificate, rules: .der)
        #expect(tree.derEncoding == certificate)
        guard case .constructed(.sequence, let fields) = tree else {
            Issue.record("a certificate is a SEQUENCE, found \(tree)")
            return
        }
        #expect(fields.count == 3)  // tbsCertificate, signatureAlgorithm, signatureValue
    }

    @Test("BER re-encodes to the DER of the same tree")
    func berNormalisesToDER() throws {
        // SEQUENCE (indefinite) { OCTET STRING with a long-form length of 3 }
        let tree = try DERTree(parsing: hex("30 80 04 81 03 41 42 43 00 00"), rules: .ber)
        #expect(tree.derEncoding == hex("30 05 04 03 41 42 43"))
    }
}

@Suite("Definite-length re-encoding of one element")
struct DefiniteLengthEncodingTests {
    @Test("an element that is already strict DER comes back as the same bytes")
    func strictDERIsUnchanged() throws {
        let certificate = try TestVectors.bytes("AppleIncRootCertificate.cer")
        let node = try ASN1Node.parse(certificate, rules: .ber)
        #expect(Array(try node.definiteLengthEncoding()) == certificate)
    }

    @Test(
        "indefinite and long-form lengths anywhere inside are made definite and minimal",
        arguments: [
            (hex("30 80 04 81 03 41 42 43 00 00"), hex("30 05 04 03 41 42 43")),
            (hex("30 08 31 80 05 00 00 00 05 00"), hex("30 06 31 02 05 00 05 00")),
            (hex("30 06 30 84 00 00 00 00"), hex("30 02 30 00")),
        ])
    func berIsMadeDefinite(encoding: [UInt8], expected: [UInt8]) throws {
        let node = try ASN1Node.parse(encoding, rules: .ber)
        #expect(Array(try node.definiteLengthEncoding()) == expected)
    }
}
