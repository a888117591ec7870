import ReceiptCrypto
import ReceiptDER
import Testing

/// The digests receipts use, against the known answers of FIPS 180-2 (appendix examples).
@Suite("Digests")
struct DigestTests {
    static let abc = Array("abc".utf8)

    @Test("SHA-1 of \"abc\" is FIPS 180-2's answer, 20 bytes")
    func sha1KnownAnswer() {
        #expect(Hex.encode(DigestAlgorithm.sha1.hash(Self.abc)) == "a9993e364706816aba3e25717850c26c9cd0d89d")
    }

    @Test("SHA-256 of \"abc\" is FIPS 180-2's answer, 32 bytes")
    func sha256KnownAnswer() {
        #expect(
            Hex.encode(DigestAlgorithm.sha256.hash(Self.abc))
                == "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad")
    }

    @Test("a slice is hashed as its own bytes, wherever it starts in its array")
    func sliceHashedAlone() {
        let padded = Array("xxabcyy".utf8)
        #expect(DigestAlgorithm.sha256.hash(padded[2..<5]) == DigestAlgorithm.sha256.hash(Self.abc))
        #expect(DigestAlgorithm.sha1.hash(padded[2..<5]) == DigestAlgorithm.sha1.hash(Self.abc))
    }
}
