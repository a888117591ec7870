import ReceiptCrypto
import ReceiptSigner
import Testing

@testable import ReceiptVerifier

/// A thread of a batch verifies with copies of what the first thread decoded and validated, rather than decoding
/// and validating the same certificates again or sharing the first thread's objects.
@Suite("Verification caches copied for another thread")
struct CacheCopyTests {
    @Test("a certificate's independent copy is equal to it, a separate object with its own bytes and key")
    func certificateCopy() throws {
        let chain = try TestFixtures.chain(.rsa2048)
        let message = Array("a message".utf8)
        let signature = try chain.signerKey.signature(for: message, digest: .sha256)
        var original: Certificate? = try Certificate(derEncoded: chain.signer.derEncoded)
        let copy = try #require(original).independentCopy()
        #expect(copy == original)
        #expect(copy !== original)
        #expect(copy.subject == chain.signer.subject)
        #expect(copy.notBefore == chain.signer.notBefore && copy.notAfter == chain.signer.notAfter)
        let originalStart = try #require(original).derEncoded.withUnsafeBufferPointer { $0.baseAddress }
        #expect(copy.derEncoded.withUnsafeBufferPointer { $0.baseAddress } != originalStart)
        let (issuer, serial) = try copy.issuerAndSerialNumber()
        let (originalIssuer, originalSerial) = try #require(original).issuerAndSerialNumber()
        #expect(Array(issuer) == Array(originalIssuer) && Array(serial) == Array(originalSerial))
        original = nil
        #expect(try copy.publicKey.isValidSignature(signature, for: message, digest: .sha256))
        #expect(copy.isIssued(by: chain.intermediate))
    }

    @Test("a verifier's copy starts with copies of its certificates and chain verdicts, and needs neither again")
    func verifierCopyStartsWarm() throws {
        let chain = try TestFixtures.chain(.ecP256)
        let signed = try TestFixtures.signed(with: .ecP256)
        let verifier = try ReceiptVerifier(trustAnchors: [chain.root])
        let first = try verifier.verify(signed)
        // The anchor, the intermediate and the signer.
        #expect(verifier.certificateCache.count == 3 && verifier.chainVerdictCount == 1)
        let copy = verifier.withOwnCaches()
        #expect(copy.certificateCache.count == 3 && copy.chainVerdictCount == 1)
        let copied = try copy.certificateCache.certificate(chain.signer.derEncoded[...])
        #expect(copied == chain.signer)
        #expect(copied !== (try verifier.certificateCache.certificate(chain.signer.derEncoded[...])))
        let again = try copy.verify(signed)
        #expect(copy.certificateCache.count == 3 && copy.chainVerdictCount == 1)
        #expect(again.chain == first.chain)
        #expect(zip(again.chain, first.chain).allSatisfy { $0 !== $1 })
        #expect(TestFixtures.code(try TestFixtures.signed(with: .rsa2048), copy) == .untrustedChain)
        #expect(copy.certificateCache.count == 5 && copy.chainVerdictCount == 2)
        #expect(verifier.certificateCache.count == 3 && verifier.chainVerdictCount == 1)
    }

    @Test("a copied failure verdict is still a failure")
    func copiedFailure() throws {
        let verifier = try ReceiptVerifier(trustAnchors: [TestFixtures.otherChain.get().root])
        let signed = try TestFixtures.signed(with: .ecP256)
        #expect(TestFixtures.code(signed, verifier) == .untrustedChain)
        let copy = verifier.withOwnCaches()
        #expect(copy.chainVerdictCount == 1)
        #expect(TestFixtures.code(signed, copy) == .untrustedChain)
        #expect(copy.chainVerdictCount == 1)
    }
}
