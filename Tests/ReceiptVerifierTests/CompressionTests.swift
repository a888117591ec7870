import ReceiptCMS
import ReceiptCompression
import ReceiptCrypto
import ReceiptDER
import ReceiptModel
import ReceiptSigner
import ReceiptVerifier
import Testing

@Suite("Compressed receipts (CMS CompressedData, zlib)")
struct CompressionTests {
    /// A receipt with `count` weekly renewals of one subscription.
    static func renewals(_ count: Int) -> Receipt {
        var receipt = TestFixtures.receipt()
        let week: Int64 = 7 * 86_400_000
        let start = TestFixtures.date("2015-01-01T00:00:00Z").millisecondsSince1970
        receipt.inAppPurchases = (0..<Int64(count)).map { index in
            InAppPurchase(
                productID: "com.example.pro.weekly", transactionID: String(1_000_000_000_000_000 + index),
                purchaseDate: ReceiptDate(millisecondsSince1970: start + index * week),
                originalTransactionID: "1000000000000000",
                expiresDate: ReceiptDate(millisecondsSince1970: start + (index + 1) * week),
                webOrderLineItemID: 1_000_000_050_000_000 + index, isTrialPeriod: index == 0,
                isInIntroOfferPeriod: false)
        }
        return receipt
    }

    /// A correctly signed receipt whose signed content is `compressedData` built from these parts.
    static func signedCompressed(
        _ compressed: [UInt8],
        algorithm: ASN1ObjectIdentifier = .zlibCompression,
        innerType: ASN1ObjectIdentifier = .cmsData
    ) throws -> [UInt8] {
        var writer = DERWriter()
        writer.appendSequence { sequence in
            sequence.appendInteger(0)
            sequence.appendSequence { $0.appendObjectIdentifier(algorithm) }
            sequence.appendSequence { encapsulated in
                encapsulated.appendObjectIdentifier(innerType)
                encapsulated.appendConstructed(.contextSpecific(0, constructed: true)) {
                    $0.appendOctetString(compressed)
                }
            }
        }
        var builder = EnvelopeBuilder(payload: writer.bytes, chain: try TestFixtures.chain(.ecP256))
        builder.contentType = .cmsCompressedData
        return try builder.build()
    }

    static func deflate(_ bytes: [UInt8]) throws -> [UInt8] { try #require(Zlib.deflate(bytes)) }

    @Test(
        "a compressed receipt verifies to the same receipt as the plain one", arguments: GeneratedKeyAlgorithm.allCases)
    func roundTrip(_ algorithm: GeneratedKeyAlgorithm) throws {
        let signer = try ReceiptSigner(credentials: TestFixtures.chain(algorithm).credentials)
        let receipt = Self.renewals(50)
        let verifier = try TestFixtures.verifier(algorithm)
        let compressed = try signer.sign(receipt, compressed: true)
        #expect(try verifier.verify(compressed).receipt == receipt)
        #expect(compressed.count < (try signer.sign(receipt)).count / 2)
    }

    @Test("the signature covers the compressed bytes: changing any of them is detected")
    func tamperingCompressedContent() throws {
        let signed = try ReceiptSigner(credentials: TestFixtures.chain(.ecP256).credentials)
            .sign(Self.renewals(3), compressed: true)
        let content = try #require(try CMSSignedData(berEncoded: signed[...]).content)
        let verifier = try TestFixtures.verifier(.ecP256)
        for offset in content.indices {
            var copy = signed
            copy[offset] ^= 0x01
            #expect(TestFixtures.code(copy, verifier) == .invalidSignature, "content byte \(offset)")
        }
    }

    @Test("a signed zlib bomb is refused at the size limit")
    func bomb() throws {
        let signed = try Self.signedCompressed(Self.deflate([UInt8](repeating: 0, count: 64 << 20)))
        #expect(TestFixtures.code(signed, try TestFixtures.verifier(.ecP256)) == .tooLarge)
    }

    @Test("a compression ratio above the limit is refused")
    func ratio() throws {
        let payload = PayloadBuilder.set(
            PayloadBuilder.minimal(extra: [PayloadBuilder.attribute(99, [UInt8](repeating: 0, count: 100_000))]))
        let signed = try Self.signedCompressed(Self.deflate(payload))
        let strict = try ReceiptVerifier(
            trustAnchors: [TestFixtures.chain(.ecP256).root], limits: VerificationLimits(maximumCompressionRatio: 50))
        #expect(TestFixtures.code(signed, strict) == .tooLarge)
        #expect(TestFixtures.code(signed, try TestFixtures.verifier(.ecP256)) == .tooLarge)
        let lenient = try ReceiptVerifier(
            trustAnchors: [TestFixtures.chain(.ecP256).root], limits: VerificationLimits(maximumCompressionRatio: 1000))
        #expect(TestFixtures.code(signed, lenient) == nil)
    }

    @Test("a compression algorithm other than zlib is refused")
    func otherAlgorithm() throws {
        let payload = PayloadBuilder.set(PayloadBuilder.minimal())
        let signed = try Self.signedCompressed(Self.deflate(payload), algorithm: ASN1ObjectIdentifier(arcs: 1, 2, 3, 4))
        #expect(TestFixtures.code(signed, try TestFixtures.verifier(.ecP256)) == .unsupportedAlgorithm)
    }

    @Test("compressed content of a type other than data is refused")
    func innerContentType() throws {
        let payload = PayloadBuilder.set(PayloadBuilder.minimal())
        let signed = try Self.signedCompressed(Self.deflate(payload), innerType: .cmsSignedData)
        #expect(TestFixtures.code(signed, try TestFixtures.verifier(.ecP256)) == .wrongContentType)
    }

    @Test(
        "compressed bytes that are not a zlib stream are unreadable",
        arguments: [[UInt8](), [0x78, 0x9C], [1, 2, 3, 4, 5]])
    func garbage(_ bytes: [UInt8]) throws {
        #expect(
            TestFixtures.code(try Self.signedCompressed(bytes), try TestFixtures.verifier(.ecP256))
                == .unreadablePayload)
    }

    @Test("bytes after the zlib stream are unreadable")
    func trailingAfterStream() throws {
        let signed = try Self.signedCompressed(Self.deflate(PayloadBuilder.set(PayloadBuilder.minimal())) + [0])
        #expect(TestFixtures.code(signed, try TestFixtures.verifier(.ecP256)) == .unreadablePayload)
    }

    @Test("a CompressedData that is not strict DER is unreadable")
    func compressedDataNotDER() throws {
        var builder = EnvelopeBuilder(payload: [0x30, 0x80, 0x00, 0x00], chain: try TestFixtures.chain(.ecP256))
        builder.contentType = .cmsCompressedData
        #expect(TestFixtures.code(try builder.build(), try TestFixtures.verifier(.ecP256)) == .unreadablePayload)
    }

    @Test("inflating stops at the limit instead of producing the whole bomb")
    func inflateStopsEarly() throws {
        let bomb = try Self.deflate([UInt8](repeating: 0, count: 64 << 20))
        #expect(throws: Zlib.InflateError.outputTooLarge(limit: 1 << 20)) {
            try Zlib.inflate(bomb[...], maximumOutput: 1 << 20, maximumRatio: .max)
        }
        #expect(throws: Zlib.InflateError.ratioTooHigh(limit: 10)) {
            try Zlib.inflate(bomb[...], maximumOutput: .max, maximumRatio: 10)
        }
    }

    @Test("zlib round-trips any bytes, and a truncated stream is malformed")
    func zlibRoundTrip() throws {
        let bytes = (0..<10_000).map { UInt8(truncatingIfNeeded: $0 * 7919) }
        let deflated = try Self.deflate(bytes)
        #expect(try Zlib.inflate(deflated[...], maximumOutput: .max, maximumRatio: .max) == bytes)
        let error = #expect(throws: Zlib.InflateError.self) {
            try Zlib.inflate(deflated.dropLast(4), maximumOutput: .max, maximumRatio: .max)
        }
        if case .malformed? = error {} else { Issue.record("expected .malformed, got \(String(describing: error))") }
    }
}
