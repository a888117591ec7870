import ReceiptCMS
import ReceiptCrypto
import ReceiptDER
import ReceiptModel
import ReceiptSigner
import ReceiptVerifier
import Testing

/// Our envelope reader and OpenSSL's CMS parser, side by side: the same receipts, the same answers.
@Suite("Envelope parsers: ours and OpenSSL's")
struct EnvelopeParserTests {
    @Test("every real receipt reads the same through OpenSSL's parser", arguments: RealReceipt.all)
    func realReceipts(_ vector: RealReceipt) throws {
        let input = try Vectors.bytes("real/" + vector.file)
        let verifier = try vector.verifier()
        let ours = try verifier.verify(input)
        let openSSL = try verifier.verify(input, parser: .openSSL)
        #expect(openSSL.receipt == ours.receipt)
        #expect(openSSL.chain.map(\.derEncoded) == ours.chain.map(\.derEncoded))
    }

    @Test("our receipts, plain, compressed and OpenSSL-built, read the same through both parsers")
    func ourReceipts() throws {
        let verifier = try TestFixtures.verifier(.ecP256)
        var withAttributes = EnvelopeBuilder(
            payload: TestFixtures.receipt().payloadDER, chain: try TestFixtures.chain(.ecP256))
        withAttributes.signedAttributes = withAttributes.correctSignedAttributes()
        let signer = try ReceiptSigner(credentials: TestFixtures.chain(.ecP256).credentials)
        for input in [
            try TestFixtures.signed(with: .ecP256), try signer.sign(TestFixtures.receipt(), compressed: true),
            try withAttributes.build(),
        ] {
            #expect(try verifier.verify(input, parser: .openSSL).receipt == verifier.verify(input).receipt)
        }
    }

    @Test("the OpenSSL path applies the same rules: tampering, wrong anchors, payload rules")
    func sameRules() throws {
        let verifier = try TestFixtures.verifier(.ecP256)
        var tampered = try TestFixtures.signed(with: .ecP256)
        tampered[tampered.count - 10] ^= 1
        let codes = { (input: [UInt8], verifier: ReceiptVerifier) -> ReceiptVerificationError.Code? in
            TestFixtures.failure { () throws(ReceiptVerificationError) in
                _ = try verifier.verify(input, parser: .openSSL)
            }?.code
        }
        #expect(codes(tampered, verifier) == .invalidSignature)
        let stranger = try ReceiptVerifier(trustAnchors: [TestFixtures.otherChain.get().root])
        #expect(codes(try TestFixtures.signed(with: .ecP256), stranger) == .untrustedChain)
        let duplicate = PayloadBuilder.set(
            PayloadBuilder.minimal(extra: [PayloadBuilder.attribute(2, PayloadBuilder.utf8("x"))]))
        let builder = EnvelopeBuilder(payload: duplicate, chain: try TestFixtures.chain(.ecP256))
        #expect(codes(try builder.build(), verifier) == .duplicateAttribute)
        #expect(codes(try TestFixtures.signed(with: .ecP256) + [0], verifier) == .malformed)
    }

    @Test("a certificate in BER form, which our reader does not take, is read through OpenSSL's parser")
    func berCertificateFallsBack() throws {
        let der = try TestFixtures.signed(with: .ecP256)
        let leaf = try TestFixtures.chain(.ecP256).signer.derEncoded
        let place = try #require(der.firstRange(of: leaf))
        // The certificate's outer SEQUENCE in the indefinite form (`30 82 LL LL` becomes `30 80` plus an
        // end-of-contents marker: the same size, so no enclosing length changes). What it signs is unchanged.
        #expect(leaf[0] == 0x30 && leaf[1] == 0x82)
        let indefinite = [0x30, 0x80] + leaf.dropFirst(4) + [0x00, 0x00]
        let ber = Array(der[..<place.lowerBound]) + indefinite + Array(der[place.upperBound...])
        #expect(ber.count == der.count)
        let refused = #expect(throws: ReceiptVerificationError.self) { try ReceiptEnvelope(input: ber) }
        #expect(refused?.message.contains("not supported") == true)
        let verified = try TestFixtures.verifier(.ecP256).verify(ber)
        #expect(verified.receipt == TestFixtures.receipt())
    }
}
