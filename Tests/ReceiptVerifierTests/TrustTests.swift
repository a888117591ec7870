import Foundation
import ReceiptCrypto
import ReceiptDER
import ReceiptModel
import ReceiptSigner
import ReceiptVerifier
import Testing

@Suite("Trust: pinned anchors, issuers, markers and time")
struct TrustTests {
    static let marker = AppleCertificates.signingLeafMarker
    static let intermediateMarker = AppleCertificates.intermediateMarker

    /// A chain whose certificates are valid from `notBefore` to `notAfter`, with the given marker extensions.
    static func chain(
        notBefore: Int64 = DevelopmentChain.defaultValidity.notBefore,
        notAfter: Int64 = DevelopmentChain.defaultValidity.notAfter,
        intermediateRole: CertificateRole = .intermediate,
        leafMarkers: [ASN1ObjectIdentifier] = [],
        intermediateMarkers: [ASN1ObjectIdentifier] = []
    ) throws -> (root: Certificate, credentials: SigningCredentials) {
        let rootKey = try PrivateKey.generate(.ecP256)
        let root = try CertificateIssuer.issue(
            commonName: "Test Root", organization: "tests", role: .root, subjectKey: rootKey, issuer: nil,
            notBefore: DevelopmentChain.defaultValidity.notBefore, notAfter: DevelopmentChain.defaultValidity.notAfter)
        let intermediateKey = try PrivateKey.generate(.ecP256)
        let intermediate = try CertificateIssuer.issue(
            commonName: "Test Intermediate", organization: "tests", role: intermediateRole, subjectKey: intermediateKey,
            issuer: (root, rootKey), notBefore: notBefore, notAfter: notAfter, markers: intermediateMarkers)
        let leafKey = try PrivateKey.generate(.ecP256)
        let leaf = try CertificateIssuer.issue(
            commonName: "Test Signer", organization: "tests", role: .signer, subjectKey: leafKey,
            issuer: (intermediate, intermediateKey), notBefore: notBefore, notAfter: notAfter, markers: leafMarkers)
        return (root, try SigningCredentials(key: leafKey, certificate: leaf, chain: [intermediate]))
    }

    static func sign(_ credentials: SigningCredentials, created: String = "2024-06-05T12:00:00Z") throws -> [UInt8] {
        var receipt = TestFixtures.receipt()
        receipt.creationDate = TestFixtures.date(created)
        return try ReceiptSigner(credentials: credentials).sign(receipt)
    }

    @Test("a receipt from another chain is untrusted")
    func wrongAnchor() throws {
        let verifier = try ReceiptVerifier(trustAnchors: [TestFixtures.otherChain.get().root])
        #expect(TestFixtures.code(try TestFixtures.signed(), verifier) == .untrustedChain)
    }

    @Test("a real Apple receipt is untrusted under an unrelated root")
    func realReceiptUnderWrongRoot() throws {
        let verifier = try ReceiptVerifier(trustAnchors: [
            Vectors.certificate("real/appreceiptvalidator/frank4dd-cacert.der")
        ])
        let receipt = try Vectors.bytes("real/appreceiptvalidator/hannes_mac_mindnode_2_receipt.der")
        #expect(TestFixtures.code(receipt, verifier) == .untrustedChain)
    }

    @Test("the root a receipt brings along is never trusted by itself")
    func embeddedRootIsNotAnAnchor() throws {
        let chain = try TestFixtures.otherChain.get()
        let credentials = try SigningCredentials(
            key: chain.signerKey, certificate: chain.signer, chain: [chain.intermediate, chain.root])
        let signed = try ReceiptSigner(credentials: credentials).sign(TestFixtures.receipt())
        #expect(TestFixtures.code(signed, try TestFixtures.verifier()) == .untrustedChain)
        #expect(TestFixtures.code(signed, try ReceiptVerifier(trustAnchors: [chain.root])) == nil)
    }

    @Test("pinning the intermediate instead of the root is not enough")
    func intermediateIsNotAnAnchor() throws {
        let chain = try TestFixtures.chain(.rsa2048)
        let verifier = try ReceiptVerifier(trustAnchors: [chain.intermediate])
        #expect(TestFixtures.code(try TestFixtures.signed(), verifier) == .untrustedChain)
    }

    @Test("a self-signed signer that is itself pinned is trusted, as Xcode's StoreKit certificate is")
    func pinnedSelfSignedSigner() throws {
        let key = try PrivateKey.generate(.rsa2048)
        let certificate = try CertificateIssuer.issue(
            commonName: "StoreKit-like", organization: "tests", role: .selfSignedSigner, subjectKey: key, issuer: nil,
            notBefore: DevelopmentChain.defaultValidity.notBefore, notAfter: DevelopmentChain.defaultValidity.notAfter)
        let signed = try ReceiptSigner(credentials: SigningCredentials(key: key, certificate: certificate)).sign(
            TestFixtures.receipt())
        #expect(TestFixtures.code(signed, try ReceiptVerifier(trustAnchors: [certificate])) == nil)
        #expect(TestFixtures.code(signed, try TestFixtures.verifier()) == .untrustedChain)
    }

    @Test("a self-signed root whose key usage excludes signatures cannot sign receipts itself")
    func selfSignedRootWithoutDigitalSignature() throws {
        let chain = try TestFixtures.chain(.rsa2048)
        let signed = try ReceiptSigner(credentials: SigningCredentials(key: chain.rootKey, certificate: chain.root))
            .sign(TestFixtures.receipt())
        #expect(TestFixtures.code(signed, try TestFixtures.verifier()) == .invalidCertificatePurpose)
    }

    @Test("an issuer that is not a CA is refused")
    func issuerMustBeCA() throws {
        let (root, credentials) = try Self.chain(intermediateRole: .signer)
        let code = TestFixtures.code(try Self.sign(credentials), try ReceiptVerifier(trustAnchors: [root]))
        #expect(code == .invalidCertificate)
    }

    @Test("a signer certificate whose key usage excludes signatures is refused")
    func signerKeyUsage() throws {
        let rootKey = try PrivateKey.generate(.ecP256)
        let root = try CertificateIssuer.issue(
            commonName: "Root", organization: "tests", role: .root, subjectKey: rootKey, issuer: nil,
            notBefore: DevelopmentChain.defaultValidity.notBefore, notAfter: DevelopmentChain.defaultValidity.notAfter)
        let caKey = try PrivateKey.generate(.ecP256)
        let ca = try CertificateIssuer.issue(
            commonName: "Intermediate", organization: "tests", role: .intermediate, subjectKey: caKey,
            issuer: (root, rootKey),
            notBefore: DevelopmentChain.defaultValidity.notBefore, notAfter: DevelopmentChain.defaultValidity.notAfter)
        let signed = try ReceiptSigner(credentials: SigningCredentials(key: caKey, certificate: ca)).sign(
            TestFixtures.receipt())
        #expect(TestFixtures.code(signed, try ReceiptVerifier(trustAnchors: [root])) == .invalidCertificatePurpose)
    }

    @Test("certificates are checked at the receipt's creation date, not now")
    func validatedAtCreationDate() throws {
        let (root, credentials) = try Self.chain(notBefore: 978_307_200, notAfter: 1_009_843_200)  // 2001 only
        let verifier = try ReceiptVerifier(trustAnchors: [root])
        #expect(TestFixtures.code(try Self.sign(credentials, created: "2001-06-01T00:00:00Z"), verifier) == nil)
    }

    @Test("a certificate that expired before the receipt was created is refused")
    func expiredAtCreation() throws {
        let (root, credentials) = try Self.chain(notBefore: 978_307_200, notAfter: 1_009_843_200)
        let code = TestFixtures.code(
            try Self.sign(credentials, created: "2002-06-01T00:00:00Z"), try ReceiptVerifier(trustAnchors: [root]))
        #expect(code == .certificateExpired)
    }

    @Test("a certificate not yet valid when the receipt was created is refused")
    func notYetValidAtCreation() throws {
        let (root, credentials) = try Self.chain(notBefore: 978_307_200, notAfter: 1_009_843_200)
        let code = TestFixtures.code(
            try Self.sign(credentials, created: "2000-06-01T00:00:00Z"), try ReceiptVerifier(trustAnchors: [root]))
        #expect(code == .certificateNotYetValid)
    }

    @Test("a validation time given by the caller replaces the creation date")
    func callerGivenTime() throws {
        let (root, credentials) = try Self.chain(notBefore: 978_307_200, notAfter: 1_009_843_200)
        let verifier = try ReceiptVerifier(trustAnchors: [root])
        let signed = try Self.sign(credentials, created: "2001-06-01T00:00:00Z")
        let later = VerificationOptions(validationTime: TestFixtures.date("2003-01-01T00:00:00Z"))
        #expect(TestFixtures.code(signed, verifier, options: later) == .certificateExpired)
        let lateReceipt = try Self.sign(credentials, created: "2005-01-01T00:00:00Z")
        let within = VerificationOptions(validationTime: TestFixtures.date("2001-03-01T00:00:00Z"))
        #expect(
            try verifier.verify(lateReceipt, options: within).validationTime
                == TestFixtures.date("2001-03-01T00:00:00Z"))
    }

    @Test("Apple's marker extensions are enforced when asked for and the chain carries them")
    func markersPresent() throws {
        let (root, credentials) = try Self.chain(
            leafMarkers: [Self.marker], intermediateMarkers: [Self.intermediateMarker])
        let verifier = try ReceiptVerifier(trustAnchors: [root], markerPolicy: .always)
        #expect(TestFixtures.code(try Self.sign(credentials), verifier) == nil)
    }

    @Test("a signer without Apple's receipt-signing marker is refused under the marker policy")
    func leafMarkerMissing() throws {
        let (root, credentials) = try Self.chain(intermediateMarkers: [Self.intermediateMarker])
        let verifier = try ReceiptVerifier(trustAnchors: [root], markerPolicy: .always)
        #expect(TestFixtures.code(try Self.sign(credentials), verifier) == .invalidCertificatePurpose)
        #expect(TestFixtures.code(try Self.sign(credentials), try ReceiptVerifier(trustAnchors: [root])) == nil)
    }

    @Test("an intermediate without Apple's WWDR marker is refused under the marker policy")
    func intermediateMarkerMissing() throws {
        let (root, credentials) = try Self.chain(leafMarkers: [Self.marker])
        let verifier = try ReceiptVerifier(trustAnchors: [root], markerPolicy: .always)
        #expect(TestFixtures.code(try Self.sign(credentials), verifier) == .invalidCertificatePurpose)
    }

    @Test("markers in the wrong places do not count")
    func swappedMarkers() throws {
        let (root, credentials) = try Self.chain(
            leafMarkers: [Self.intermediateMarker], intermediateMarkers: [Self.marker])
        let verifier = try ReceiptVerifier(trustAnchors: [root], markerPolicy: .always)
        #expect(TestFixtures.code(try Self.sign(credentials), verifier) == .invalidCertificatePurpose)
    }

    @Test("real Apple receipts pass the marker checks, which apply to Apple's root by default")
    func realAppleReceiptsCarryMarkers() throws {
        let verifier = try ReceiptVerifier(trustAnchors: [
            Vectors.certificate("real/apple-pki/AppleIncRootCertificate.cer")
        ])
        let verified = try verifier.verify(Vectors.bytes("real/tpinappreceipt/receipt-production.der"))
        #expect(verified.chain[0].hasExtension(Self.marker))
        #expect(verified.chain[1].hasExtension(Self.intermediateMarker))
    }
}

@Suite("Apple's roots")
struct AppleRootTests {
    @Test("the roots shipped in certs/apple are exactly the ones recognised as Apple's, by fingerprint")
    func shippedRootsAreRecognised() throws {
        let directory = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent().appendingPathComponent("certs/apple")
        var roots: Set<String> = []
        for name in try FileManager.default.contentsOfDirectory(atPath: directory.path) where name.hasSuffix(".cer") {
            let certificates = try Certificate.load(
                pemOrDER: [UInt8](Data(contentsOf: directory.appendingPathComponent(name))))
            for certificate in certificates {
                #expect(AppleCertificates.isAppleRoot(certificate) == certificate.isSelfSigned, "\(name)")
                if certificate.isSelfSigned { roots.insert(certificate.sha256Fingerprint) }
            }
        }
        #expect(roots == AppleCertificates.rootFingerprints)
    }
}
