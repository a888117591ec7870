import ReceiptCrypto
import ReceiptJWS
import ReceiptModel
import ReceiptSigner
import StrictJSON
import Testing

/// Apple's marker extensions: required under Apple's roots, and under any root when the caller asks.
@Suite("Marker policy")
struct MarkerPolicyTests {
    static func certificates(_ names: String...) throws -> [Certificate] {
        try names.map { try Vectors.certificate("apple-assl/certs/\($0).pem") }
    }

    static let time = ReceiptDate(millisecondsSince1970: 1_700_000_000_000)

    static func code(_ chain: [Certificate], _ policy: JWSVerifier.MarkerPolicy) throws -> JWSError.Code? {
        let verifier = try Vectors.verifier(Vectors.appleLibraryTestCA(), markerPolicy: policy)
        return try Vectors.code { try verifier.validateChain(chain, at: time) }
    }

    @Test("the test chain of Apple's library passes with markers required")
    func validTestChain() throws {
        #expect(try Self.code(Self.certificates("testLeaf", "testIntermediate"), .always) == nil)
    }

    @Test("a leaf with the wrong marker OID is refused when markers are required")
    func invalidLeafOID() throws {
        #expect(
            try Self.code(Self.certificates("testInvalidOIDLeaf", "testIntermediate"), .always)
                == .missingMarkerExtension)
    }

    @Test("an intermediate with the wrong marker OID is refused when markers are required")
    func invalidIntermediateOID() throws {
        #expect(
            try Self.code(Self.certificates("testInvalidIntermediateLeaf", "testInvalidOIDIntermediate"), .always)
                == .missingMarkerExtension)
    }

    @Test("under an anchor that is not Apple's, markers are not required by default")
    func notRequiredUnderOtherAnchors() throws {
        #expect(try Self.code(Self.certificates("testInvalidOIDLeaf", "testIntermediate"), .underAppleRoots) == nil)
    }

    @Test("an intermediate presented as the leaf is refused: its keyUsage does not allow signing")
    func intermediateAsLeaf() throws {
        let chain = try Self.certificates("testIntermediate", "testLeaf")
        #expect(try Self.code(chain, .underAppleRoots) == .invalidCertificate)
        #expect(try Self.code(chain, .always) == .invalidCertificate)
    }

    @Test("our own chain without markers is refused when markers are required, accepted otherwise")
    func ownChainWithoutMarkers() throws {
        let chain = try Fresh.chain.get()
        let signed = try Fresh.transaction()
        let strict = try Vectors.verifier(chain.root, markerPolicy: .always)
        #expect(try Vectors.code { try strict.verify(signed) } == .missingMarkerExtension)
        #expect(try Vectors.code { try Vectors.verifier(chain.root).verify(signed) } == nil)
    }

    @Test("our Apple-compatible chain carries the markers")
    func appleCompatibleChain() throws {
        let chain = try Fresh.appleLikeChain.get()
        let signed = try Fresh.signer(chain).sign(
            payload: JSONObject(["signedDate": .integer(Fresh.signedDate.millisecondsSince1970)]))
        let verified = try Vectors.verifier(chain.root, markerPolicy: .always).verify(signed)
        #expect(verified.chain.count == 3)
    }

    @Test("with markers required, a leaf signed directly by the root is refused")
    func twoCertificateChain() throws {
        let chain = try Fresh.appleLikeChain.get()
        let leafKey = try PrivateKey.generate(.ecP256)
        let leaf = try CertificateIssuer.issue(
            commonName: "direct", organization: "tests", role: .signer, subjectKey: leafKey,
            issuer: (chain.root, chain.rootKey), notBefore: DevelopmentChain.defaultValidity.notBefore,
            notAfter: DevelopmentChain.defaultValidity.notAfter, markers: [AppleCertificates.signingLeafMarker])
        let signed = try JWSSigner(key: leafKey, chain: [leaf, chain.root]).sign(
            payload: JSONObject(["signedDate": .integer(Fresh.signedDate.millisecondsSince1970)]))
        let verifier = try Vectors.verifier(chain.root, markerPolicy: .always)
        #expect(try Vectors.code { try verifier.verify(signed) } == .missingMarkerExtension)
    }
}
