import Dispatch
import ReceiptCrypto
import ReceiptModel
import ReceiptSigner
import ReceiptVerifier
import Synchronization
import Testing

/// Caching decoded certificates and chain verdicts makes verification fast; these tests show it never makes an
/// invalid receipt pass.
@Suite("Verification caches")
struct CacheTests {
    @Test("the same certificate bytes under a different anchor set are still untrusted, with a shared cache")
    func differentAnchorSet() throws {
        let shared = CertificateCache()
        let signed = try TestFixtures.signed(with: .ecP256)
        let trusting = try ReceiptVerifier(trustAnchors: [TestFixtures.chain(.ecP256).root], certificateCache: shared)
        #expect(TestFixtures.code(signed, trusting) == nil)
        #expect(shared.count == 3)  // the anchor, the intermediate and the signer
        let other = try ReceiptVerifier(trustAnchors: [TestFixtures.otherChain.get().root], certificateCache: shared)
        #expect(TestFixtures.code(signed, other) == .untrustedChain)
        #expect(TestFixtures.code(signed, trusting) == nil)
    }

    @Test("a receipt whose time falls outside the cached validity window gets full validation's answer")
    func outsideCachedWindow() throws {
        let (root, credentials) = try TrustTests.chain(notBefore: 978_307_200, notAfter: 1_009_843_200)  // 2001
        let verifier = try ReceiptVerifier(trustAnchors: [root])
        #expect(TestFixtures.code(try TrustTests.sign(credentials, created: "2001-06-01T00:00:00Z"), verifier) == nil)
        #expect(
            TestFixtures.code(try TrustTests.sign(credentials, created: "2002-06-01T00:00:00Z"), verifier)
                == .certificateExpired)
        #expect(
            TestFixtures.code(try TrustTests.sign(credentials, created: "2000-06-01T00:00:00Z"), verifier)
                == .certificateNotYetValid)
        #expect(TestFixtures.code(try TrustTests.sign(credentials, created: "2001-12-31T23:59:59Z"), verifier) == nil)
        #expect(TestFixtures.code(try TrustTests.sign(credentials, created: "2001-01-01T00:00:00Z"), verifier) == nil)
    }

    @Test("the window's edges are the certificates' own: one second past notAfter is expired")
    func windowEdges() throws {
        let (root, credentials) = try TrustTests.chain(notBefore: 978_307_200, notAfter: 1_009_843_200)
        let verifier = try ReceiptVerifier(trustAnchors: [root])
        let signed = try TrustTests.sign(credentials, created: "2001-06-01T00:00:00Z")
        #expect(TestFixtures.code(signed, verifier) == nil)
        let atEnd = VerificationOptions(validationTime: ReceiptDate(secondsSince1970: 1_009_843_200))
        let pastEnd = VerificationOptions(validationTime: ReceiptDate(secondsSince1970: 1_009_843_201))
        let atStart = VerificationOptions(validationTime: ReceiptDate(secondsSince1970: 978_307_200))
        let beforeStart = VerificationOptions(validationTime: ReceiptDate(secondsSince1970: 978_307_199))
        #expect(TestFixtures.code(signed, verifier, options: atEnd) == nil)
        #expect(TestFixtures.code(signed, verifier, options: pastEnd) == .certificateExpired)
        #expect(TestFixtures.code(signed, verifier, options: atStart) == nil)
        #expect(TestFixtures.code(signed, verifier, options: beforeStart) == .certificateNotYetValid)
    }

    @Test("at each edge of the validity window, a warm cache answers exactly as full validation does")
    func windowEdgesAgreeWithFullValidation() throws {
        let (root, credentials) = try TrustTests.chain(notBefore: 978_307_200, notAfter: 1_009_843_200)
        let signed = try TrustTests.sign(credentials, created: "2001-06-01T00:00:00Z")
        for seconds: Int64 in [978_307_199, 978_307_200, 978_307_201, 1_009_843_199, 1_009_843_200, 1_009_843_201] {
            let options = VerificationOptions(validationTime: ReceiptDate(secondsSince1970: seconds))
            let cold = try ReceiptVerifier(trustAnchors: [root])
            let warm = try ReceiptVerifier(trustAnchors: [root])
            #expect(TestFixtures.code(signed, warm) == nil)
            #expect(
                TestFixtures.code(signed, warm, options: options) == TestFixtures.code(signed, cold, options: options),
                "at \(seconds)")
        }
    }

    @Test("a certificate revoked by configuration fails its chain, whatever a shared cache holds")
    func revokedByConfiguration() throws {
        let chain = try TestFixtures.chain(.ecP256)
        let shared = CertificateCache()
        let signed = try TestFixtures.signed(with: .ecP256)
        let trusting = try ReceiptVerifier(trustAnchors: [chain.root], certificateCache: shared)
        #expect(TestFixtures.code(signed, trusting) == nil)
        for revoked in [chain.intermediate, chain.signer, chain.root] {
            let distrusting = try ReceiptVerifier(
                trustAnchors: [chain.root], revokedCertificates: [revoked], certificateCache: shared)
            #expect(TestFixtures.code(signed, distrusting) == .untrustedChain, "\(revoked.subject)")
            #expect(TestFixtures.code(signed, distrusting) == .untrustedChain, "\(revoked.subject), cached")
        }
    }

    @Test("a copy with caches of its own keeps the anchors, limits and revocations, and fills only its own caches")
    func copyWithOwnCaches() throws {
        let chain = try TestFixtures.chain(.ecP256)
        let signed = try TestFixtures.signed(with: .ecP256)
        let verifier = try ReceiptVerifier(trustAnchors: [chain.root])
        let copy = verifier.withOwnCaches()
        #expect(copy.certificateCache !== verifier.certificateCache)
        #expect(copy.certificateCache.count == 1)  // a copy of the anchor
        #expect(TestFixtures.code(signed, copy) == nil)
        #expect(copy.certificateCache.count == 3 && verifier.certificateCache.count == 1)
        #expect(TestFixtures.code(try TestFixtures.signed(with: .rsa2048), copy) == .untrustedChain)
        let distrusting = try ReceiptVerifier(trustAnchors: [chain.root], revokedCertificates: [chain.intermediate])
        #expect(TestFixtures.code(signed, distrusting.withOwnCaches()) == .untrustedChain)
        let small = try ReceiptVerifier(trustAnchors: [chain.root], limits: VerificationLimits(maximumInputSize: 100))
        #expect(TestFixtures.code(signed, small.withOwnCaches()) == .tooLarge)
    }

    @Test("a receipt that carries a copy of its anchor, as Apple's carry their root, is given the anchor itself")
    func anchorCopyTakenFromTheCache() throws {
        let root = try Vectors.certificate("real/apple-pki/AppleIncRootCertificate.cer")
        let verifier = try ReceiptVerifier(trustAnchors: [root])
        let receipt = try Vectors.bytes("real/tpinappreceipt/receipt-production.der")
        let envelope = try ReceiptEnvelope(input: receipt, certificateCache: verifier.certificateCache)
        #expect(envelope.certificates.count == 3)
        #expect(envelope.certificates.filter { $0 === root }.count == 1)
        #expect(verifier.certificateCache.count == 3)
        #expect(try verifier.verify(receipt).chain.last == root)
    }

    @Test("a cached failure is repeated, and a tampered receipt never reuses a good verdict")
    func cachedFailures() throws {
        let verifier = try ReceiptVerifier(trustAnchors: [TestFixtures.otherChain.get().root])
        let signed = try TestFixtures.signed(with: .ecP256)
        #expect(TestFixtures.code(signed, verifier) == .untrustedChain)
        #expect(TestFixtures.code(signed, verifier) == .untrustedChain)
        let good = try TestFixtures.verifier(.ecP256)
        #expect(TestFixtures.code(signed, good) == nil)
        var tampered = signed
        tampered[tampered.count - 10] ^= 1
        #expect(TestFixtures.code(tampered, good) == .invalidSignature)
    }

    @Test("one verifier used from many threads at once gives every thread the right answer")
    func concurrentUse() throws {
        let verifier = try TestFixtures.verifier(.ecP256)
        let valid = try TestFixtures.signed(with: .ecP256)
        var tampered = valid
        tampered[tampered.count - 10] ^= 1
        let invalid = tampered
        let wrong = Mutex(0)
        DispatchQueue.concurrentPerform(iterations: 400) { index in
            let expected: ReceiptVerificationError.Code? = index % 2 == 0 ? nil : .invalidSignature
            if TestFixtures.code(index % 2 == 0 ? valid : invalid, verifier) != expected {
                wrong.withLock { $0 += 1 }
            }
        }
        #expect(wrong.withLock { $0 } == 0)
    }

    @Test("verify(many:) returns every result in input order")
    func batchOrder() throws {
        let verifier = try TestFixtures.verifier(.ecP256)
        let valid = try TestFixtures.signed(with: .ecP256)
        var tampered = valid
        tampered[tampered.count - 10] ^= 1
        let inputs = (0..<50).map { $0 % 3 == 1 ? tampered : valid } + [[], Array("junk".utf8)]
        let results = verifier.verify(many: inputs, threads: 4)
        #expect(results.count == inputs.count)
        for (index, result) in results.enumerated() {
            switch result {
            case .success: #expect(index < 50 && index % 3 != 1, "input \(index)")
            case .failure(let error):
                #expect(index >= 50 || index % 3 == 1, "input \(index)")
                #expect(error.code == (index >= 50 ? .malformed : .invalidSignature), "input \(index)")
            }
        }
    }
}
