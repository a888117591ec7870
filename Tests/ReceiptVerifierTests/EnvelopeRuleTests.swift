import ReceiptCMS
import ReceiptCrypto
import ReceiptDER
import ReceiptModel
import ReceiptSigner
import ReceiptVerifier
import Testing

@Suite("Envelope rules")
struct EnvelopeRuleTests {
    static func builder(_ algorithm: GeneratedKeyAlgorithm = .rsa2048) throws -> EnvelopeBuilder {
        EnvelopeBuilder(payload: TestFixtures.receipt().payloadDER, chain: try TestFixtures.chain(algorithm))
    }

    static func code(_ builder: EnvelopeBuilder, _ algorithm: GeneratedKeyAlgorithm = .rsa2048) throws
        -> ReceiptVerificationError.Code?
    {
        TestFixtures.code(try builder.build(), try TestFixtures.verifier(algorithm))
    }

    @Test("the hand-built envelope is valid as built")
    func baseline() throws {
        #expect(try Self.code(Self.builder()) == nil)
    }

    @Test("two signers are refused")
    func twoSigners() throws {
        var builder = try Self.builder()
        builder.signerCount = 2
        #expect(try Self.code(builder) == .wrongSignerCount)
    }

    @Test("no signer is refused")
    func noSigner() throws {
        var builder = try Self.builder()
        builder.signerCount = 0
        #expect(try Self.code(builder) == .wrongSignerCount)
    }

    @Test("detached content is refused")
    func detachedContent() throws {
        var builder = try Self.builder()
        builder.payload = nil
        #expect(try Self.code(builder) == .missingContent)
    }

    @Test("content of a type other than data is refused")
    func wrongContentType() throws {
        var builder = try Self.builder()
        builder.contentType = .cmsSignedData
        #expect(try Self.code(builder) == .wrongContentType)
    }

    @Test("bytes after the ContentInfo are refused")
    func trailingBytes() throws {
        var builder = try Self.builder()
        builder.trailing = [0x00]
        #expect(try Self.code(builder) == .malformed)
    }

    @Test("a ContentInfo that is not SignedData is refused")
    func notSignedData() throws {
        var writer = DERWriter()
        writer.appendSequence { contentInfo in
            contentInfo.appendObjectIdentifier(.cmsData)
            contentInfo.appendConstructed(.contextSpecific(0, constructed: true)) { $0.appendOctetString([1, 2, 3]) }
        }
        #expect(TestFixtures.code(writer.bytes, try TestFixtures.verifier()) == .malformed)
    }

    @Test(
        "SHA-1 receipts verify, as older Apple receipts are SHA-1",
        arguments: [ASN1ObjectIdentifier.rsaEncryption, .sha1WithRSAEncryption])
    func sha1(_ signatureAlgorithm: ASN1ObjectIdentifier) throws {
        var builder = try Self.builder()
        builder.digest = .sha1
        builder.digestAlgorithm = .sha1
        builder.signatureAlgorithm = signatureAlgorithm
        #expect(try Self.code(builder) == nil)
    }

    @Test("ECDSA with SHA-1 verifies")
    func ecdsaSHA1() throws {
        var builder = try Self.builder(.ecP256)
        builder.digest = .sha1
        builder.digestAlgorithm = .sha1
        builder.signatureAlgorithm = .ecdsaWithSHA1
        #expect(try Self.code(builder, .ecP256) == nil)
    }

    @Test("a digest algorithm other than SHA-1 or SHA-256 is refused")
    func unsupportedDigest() throws {
        var builder = try Self.builder()
        builder.digestAlgorithm = ASN1ObjectIdentifier(arcs: 1, 2, 840, 113_549, 2, 5)  // MD5
        #expect(try Self.code(builder) == .unsupportedAlgorithm)
    }

    @Test("SignedData.digestAlgorithms must list only supported digests, the signer's among them")
    func announcedDigests() throws {
        var builder = try Self.builder()
        builder.announcedDigestAlgorithms = [.sha256, ASN1ObjectIdentifier(arcs: 2, 16, 840, 3, 101, 3, 4, 2, 1)]
        #expect(try Self.code(builder) == .unsupportedAlgorithm)
        builder.announcedDigestAlgorithms = [.sha1]
        #expect(try Self.code(builder) == .unsupportedAlgorithm)
        builder.announcedDigestAlgorithms = [.sha1, .sha256]
        #expect(try Self.code(builder) == nil)
    }

    @Test("a signature algorithm whose hash differs from the digest algorithm is refused")
    func mismatchedSignatureAlgorithm() throws {
        var builder = try Self.builder()
        builder.signatureAlgorithm = .sha1WithRSAEncryption
        #expect(try Self.code(builder) == .unsupportedAlgorithm)
    }

    @Test("an RSA signature algorithm with an EC key is refused")
    func algorithmKeyMismatch() throws {
        var builder = try Self.builder(.ecP256)
        builder.signatureAlgorithm = .sha256WithRSAEncryption
        #expect(try Self.code(builder, .ecP256) == .invalidSignature)
    }

    @Test("a signer missing from the certificates is refused")
    func signerCertificateMissing() throws {
        var builder = try Self.builder()
        builder.certificates = [try TestFixtures.chain(.rsa2048).intermediate]
        #expect(try Self.code(builder) == .signerCertificateMissing)
    }

    @Test("a signer whose issuer name differs only in case still matches, as RFC 5280 compares names")
    func issuerNameCase() throws {
        var der = try Self.builder(.ecP256).build()
        let name = Array("openreceipt TEST ONLY Intermediate CA".utf8)
        let last = try #require(der.ranges(of: name).last)
        der[last.lowerBound + 12] = UInt8(ascii: "t")
        #expect(try Self.builder(.ecP256).signerCertificate.issuer.contains("TEST ONLY Intermediate"))
        #expect(TestFixtures.code(der, try TestFixtures.verifier(.ecP256)) == nil)
        der[last.upperBound + 3] ^= 0x01  // and a serial number that differs does not match
        #expect(TestFixtures.code(der, try TestFixtures.verifier(.ecP256)) == .signerCertificateMissing)
    }

    @Test("a signer identified by its subject key identifier verifies")
    func subjectKeyIdentifier() throws {
        var builder = try Self.builder()
        builder.identifyBySubjectKeyIdentifier = true
        #expect(try Self.code(builder) == nil)
    }

    @Test("correct signed attributes verify")
    func signedAttributes() throws {
        var builder = try Self.builder()
        builder.signedAttributes = builder.correctSignedAttributes()
        #expect(try Self.code(builder) == nil)
    }

    @Test("a message digest that does not match the payload is refused")
    func wrongMessageDigest() throws {
        var builder = try Self.builder()
        var attributes = builder.correctSignedAttributes()
        var digest = DERWriter()
        digest.appendOctetString([UInt8](repeating: 0xAB, count: 32))
        attributes[1] = EnvelopeBuilder.attribute(.cmsMessageDigestAttribute, digest.bytes)
        builder.signedAttributes = attributes
        #expect(try Self.code(builder) == .invalidSignature)
    }

    @Test("a content-type attribute that differs from the content's type is refused")
    func wrongContentTypeAttribute() throws {
        var builder = try Self.builder()
        var attributes = builder.correctSignedAttributes()
        var type = DERWriter()
        type.appendObjectIdentifier(.cmsSignedData)
        attributes[0] = EnvelopeBuilder.attribute(.cmsContentTypeAttribute, type.bytes)
        builder.signedAttributes = attributes
        #expect(try Self.code(builder) == .invalidSignedAttributes)
    }

    @Test("signed attributes without a content type are refused")
    func missingContentTypeAttribute() throws {
        var builder = try Self.builder()
        builder.signedAttributes = [builder.correctSignedAttributes()[1]]
        #expect(try Self.code(builder) == .invalidSignedAttributes)
    }

    @Test("a repeated signed attribute is refused")
    func repeatedSignedAttribute() throws {
        var builder = try Self.builder()
        let attributes = builder.correctSignedAttributes()
        builder.signedAttributes = attributes + [attributes[1]]
        #expect(try Self.code(builder) == .malformed)
    }
}
