import ReceiptCMS
import ReceiptCrypto
import ReceiptDER
import ReceiptModel
import ReceiptSigner
import ReceiptVerifier
import Testing

@Suite("Tampering")
struct TamperingTests {
    /// The signed receipt, and where its payload, signature and certificates lie inside it.
    struct Layout {
        let bytes: [UInt8]
        let payload: Range<Int>
        let signature: Range<Int>
        let certificates: [Range<Int>]

        init(_ bytes: [UInt8]) throws {
            self.bytes = bytes
            let signedData = try CMSSignedData(berEncoded: bytes[...])
            let content = try #require(signedData.content)
            payload = content.startIndex..<content.endIndex
            let signature = try #require(signedData.signerInfos.first?.signature)
            self.signature = signature.startIndex..<signature.endIndex
            certificates = signedData.certificates.map { $0.startIndex..<$0.endIndex }
        }

        func flipping(_ offset: Int) -> [UInt8] {
            var copy = bytes
            copy[offset] ^= 0x01
            return copy
        }
    }

    @Test("changing any byte of the payload breaks the signature", arguments: GeneratedKeyAlgorithm.allCases)
    func payloadTampering(_ algorithm: GeneratedKeyAlgorithm) throws {
        let layout = try Layout(TestFixtures.signed(with: algorithm))
        let verifier = try TestFixtures.verifier(algorithm)
        for offset in layout.payload {
            let code = TestFixtures.code(layout.flipping(offset), verifier)
            #expect(code == .invalidSignature, "payload byte \(offset - layout.payload.lowerBound)")
        }
    }

    @Test("changing any byte of the signature is detected", arguments: GeneratedKeyAlgorithm.allCases)
    func signatureTampering(_ algorithm: GeneratedKeyAlgorithm) throws {
        let layout = try Layout(TestFixtures.signed(with: algorithm))
        let verifier = try TestFixtures.verifier(algorithm)
        for offset in layout.signature {
            #expect(TestFixtures.code(layout.flipping(offset), verifier) != nil, "signature byte \(offset)")
        }
    }

    @Test("changing any byte of a certificate is detected", arguments: GeneratedKeyAlgorithm.allCases)
    func certificateTampering(_ algorithm: GeneratedKeyAlgorithm) throws {
        let layout = try Layout(TestFixtures.signed(with: algorithm))
        let verifier = try TestFixtures.verifier(algorithm)
        for range in layout.certificates {
            for offset in range {
                #expect(TestFixtures.code(layout.flipping(offset), verifier) != nil, "certificate byte \(offset)")
            }
        }
    }

    @Test("a changed intermediate signature is an invalid certificate")
    func intermediateSignatureTampering() throws {
        let layout = try Layout(TestFixtures.signed())
        let intermediate = try #require(layout.certificates.last)
        #expect(
            TestFixtures.code(layout.flipping(intermediate.upperBound - 5), try TestFixtures.verifier())
                == .invalidCertificate)
    }

    @Test("an empty signature is refused")
    func emptySignature() throws {
        let chain = try TestFixtures.chain(.rsa2048)
        var builder = EnvelopeBuilder(payload: TestFixtures.receipt().payloadDER, chain: chain)
        builder.key = try TestFixtures.otherChain.get().signerKey
        #expect(TestFixtures.code(try builder.build(), try TestFixtures.verifier()) == .invalidSignature)
    }

    @Test("a receipt re-signed by another key under the same certificate is refused")
    func resignedWithAnotherKey() throws {
        let chain = try TestFixtures.chain(.ecP256)
        var builder = EnvelopeBuilder(payload: TestFixtures.receipt().payloadDER, chain: chain)
        builder.key = try TestFixtures.otherChain.get().signerKey
        #expect(TestFixtures.code(try builder.build(), try TestFixtures.verifier(.ecP256)) == .invalidSignature)
    }

    @Test("a look-alike chain with the same names but other keys is untrusted")
    func lookAlikeChain() throws {
        let verifier = try TestFixtures.verifier(.ecP256)
        let impostor = try TestFixtures.otherChain.get()
        let signed = try ReceiptSigner(credentials: impostor.credentials).sign(TestFixtures.receipt())
        #expect(impostor.signer.subject == (try TestFixtures.chain(.ecP256)).signer.subject)
        #expect(TestFixtures.code(signed, verifier) == .untrustedChain)
    }
}
