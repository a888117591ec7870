import ReceiptDER
import ReceiptJWS
import Testing

@Suite("Base64url")
struct Base64URLTests {
    static func decodes(_ text: String) -> [UInt8]? { try? Base64URL.decode(Array(text.utf8)) }

    @Test("RFC 4648 test vectors encode without padding and decode back")
    func vectors() {
        let cases = [("", ""), ("f", "Zg"), ("fo", "Zm8"), ("foo", "Zm9v"), ("foob", "Zm9vYg"), ("fooba", "Zm9vYmE")]
        for (plain, encoded) in cases {
            #expect(Base64URL.encode(Array(plain.utf8)) == encoded)
            #expect(Self.decodes(encoded) == Array(plain.utf8))
        }
    }

    @Test("the URL-safe alphabet replaces + and / with - and _")
    func urlSafeAlphabet() {
        #expect(Base64URL.encode([0xFB, 0xFF]) == "-_8")
        #expect(Self.decodes("-_8") == [0xFB, 0xFF])
        #expect(Self.decodes("+/8") == nil)
    }

    @Test("every byte string round-trips", arguments: 0..<70)
    func roundTrip(_ length: Int) throws {
        let bytes = (0..<length).map { UInt8(truncatingIfNeeded: $0 &* 37 &+ 11) }
        #expect(try Base64URL.decode(Array(Base64URL.encode(bytes).utf8)) == bytes)
    }

    @Test("padding is refused")
    func padding() {
        #expect(Self.decodes("Zg==") == nil)
        #expect(Self.decodes("Zm8=") == nil)
    }

    @Test("a length of 1 modulo 4 is refused")
    func impossibleLength() {
        #expect(Self.decodes("Z") == nil)
        #expect(Self.decodes("Zm9vY") == nil)
    }

    @Test("non-zero unused bits in the last character are refused")
    func nonCanonical() {
        #expect(Self.decodes("Zh") == nil)
        #expect(Self.decodes("Zm9") == nil)
    }

    @Test("whitespace is refused")
    func whitespace() {
        #expect(Self.decodes("Zm9v Yg") == nil)
        #expect(Self.decodes("Zm9v\nYg") == nil)
    }
}

@Suite("ES256 signature encodings")
struct ES256SignatureTests {
    @Test("r ‖ s becomes a minimal DER ECDSA-Sig-Value and back")
    func roundTrip() throws {
        var raw = [UInt8](repeating: 0, count: 64)
        raw[31] = 1  // r = 1
        raw[32] = 0x80  // s has its top bit set: DER needs a leading zero octet
        let der = try ES256Signature.der(fromRaw: raw)
        #expect(der == [0x30, 0x26, 0x02, 0x01, 0x01, 0x02, 0x21, 0x00, 0x80] + [UInt8](repeating: 0, count: 31))
        #expect(try ES256Signature.raw(fromDER: der) == raw)
    }

    @Test("raw signatures other than 64 bytes are refused", arguments: [0, 63, 65, 72])
    func rawLength(_ length: Int) {
        #expect(throws: JWSError.self) { try ES256Signature.der(fromRaw: [UInt8](repeating: 1, count: length)) }
    }

    @Test("DER that is not minimal, not positive, too large, or followed by data is refused")
    func strictDER() {
        let one: [UInt8] = [0x02, 0x01, 0x01]
        let refused: [[UInt8]] = [
            [0x30, 0x07, 0x02, 0x02, 0x00, 0x01] + one,  // INTEGER with a redundant leading zero
            [0x30, 0x81, 0x06] + one + one,  // long-form length below 128
            [0x30, 0x06, 0x02, 0x01, 0x00] + one,  // r = 0
            [0x30, 0x06, 0x02, 0x01, 0xFF] + one,  // r negative
            [0x30, 0x26, 0x02, 0x21, 0x01] + [UInt8](repeating: 0, count: 32) + one,  // r of 33 bytes
            [0x30, 0x06] + one + one + [0x00],  // trailing byte
            [0x30, 0x09] + one + one + one,  // a third INTEGER
            [0x30, 0x03] + one,  // s missing
        ]
        for der in refused {
            #expect(throws: JWSError.self) { try ES256Signature.raw(fromDER: der) }
        }
        #expect((try? ES256Signature.raw(fromDER: [0x30, 0x06] + one + one))?.count == 64)
    }
}
