import ReceiptCrypto
import ReceiptDER
import ReceiptJWS
import ReceiptModel
import StrictJSON
import Testing

@Suite("App Store Server API tokens")
struct APITokenTests {
    static let issuer = "57246542-96fe-1a63-e053-0824d011072a"
    static let now = ReceiptDate(secondsSince1970: 1_800_000_000)

    let privateKey: PrivateKey
    let signer: APITokenSigner
    let verifier: APITokenVerifier

    init() throws {
        privateKey = try PrivateKey.generate(.ecP256)
        signer = try APITokenSigner(key: privateKey, keyID: "ABC123DEFG", issuerID: Self.issuer)
        let publicKey = try PublicKey(pemOrDER: Array(privateKey.publicKeyPEM.utf8))
        verifier = APITokenVerifier(
            keys: [try APIKey(issuerID: Self.issuer, keyID: "ABC123DEFG", publicKey: publicKey)],
            bundleIDs: ["com.example.game"])
    }

    func seconds(_ offset: Int64) -> ReceiptDate {
        ReceiptDate(secondsSince1970: Self.now.millisecondsSince1970 / 1000 + offset)
    }

    func token(
        bundleID: String = "com.example.game", issuedAt: Int64? = 0, expires: Int64 = 300,
        signer: APITokenSigner? = nil
    ) throws -> [UInt8] {
        Array(
            try (signer ?? self.signer).token(
                bundleID: bundleID, issuedAt: issuedAt.map(seconds), expires: seconds(expires)
            ).utf8)
    }

    func code(_ token: [UInt8]) -> APITokenError.Code? {
        do {
            _ = try verifier.verify(token, at: Self.now)
            return nil
        } catch {
            return error.code
        }
    }

    /// `token` with its claims replaced by `claims` and signed again with the test key.
    func resigned(header: String = #"{"alg":"ES256","kid":"ABC123DEFG"}"#, claims: String) throws -> [UInt8] {
        let input = Base64URL.encode(Array(header.utf8)) + "." + Base64URL.encode(Array(claims.utf8))
        let raw = try ES256Signature.raw(fromDER: privateKey.signature(for: Array(input.utf8), digest: .sha256))
        return Array((input + "." + Base64URL.encode(raw)).utf8)
    }

    @Test("a token as App Store Connect keys sign it is accepted with its claims")
    func accepted() throws {
        let claims = try verifier.verify(token(), at: Self.now)
        #expect(claims.bundleID == "com.example.game")
        #expect(claims.issuerID == Self.issuer)
        #expect(claims.keyID == "ABC123DEFG")
        #expect(claims.issuedAt == Self.now)
        #expect(claims.expires == seconds(300))
    }

    @Test("a token without iat, as Apple's libraries send, is accepted when it expires within the hour")
    func withoutIssuedAt() throws {
        #expect(code(try token(issuedAt: nil, expires: 300)) == nil)
        #expect(code(try token(issuedAt: nil, expires: 3601)) == .lifetimeTooLong)
    }

    @Test("a token expiring more than 60 minutes after iat is refused")
    func lifetime() throws {
        #expect(code(try token(issuedAt: 0, expires: 3600)) == nil)
        #expect(code(try token(issuedAt: 0, expires: 3601)) == .lifetimeTooLong)
    }

    @Test("an expired token is refused, and one issued in the future beyond the skew")
    func timeWindow() throws {
        #expect(code(try token(issuedAt: -400, expires: -1)) == .expired)
        #expect(code(try token(issuedAt: -400, expires: 0)) == .expired)
        #expect(code(try token(issuedAt: 60, expires: 600)) == nil)
        #expect(code(try token(issuedAt: 61, expires: 600)) == .notYetValid)
    }

    @Test("a token for an app that is not configured is refused")
    func unknownBundle() throws {
        #expect(code(try token(bundleID: "com.example.other")) == .unknownBundleID)
    }

    @Test("a token signed by another key under the same key id is refused")
    func otherKey() throws {
        let stranger = try APITokenSigner(key: .generate(.ecP256), keyID: "ABC123DEFG", issuerID: Self.issuer)
        #expect(code(try token(signer: stranger)) == .invalidSignature)
    }

    @Test("a key id that is not configured, or another issuer, is refused")
    func keyAndIssuer() throws {
        let unknown = try APITokenSigner(key: privateKey, keyID: "ZZZ999", issuerID: Self.issuer)
        #expect(code(try token(signer: unknown)) == .unknownKey)
        let otherIssuer = try APITokenSigner(key: privateKey, keyID: "ABC123DEFG", issuerID: "another-issuer")
        #expect(code(try token(signer: otherIssuer)) == .wrongIssuer)
    }

    @Test("another audience, another algorithm or no kid is refused")
    func headerAndAudience() throws {
        let exp = seconds(300).millisecondsSince1970 / 1000
        let claims = { (aud: String) in
            #"{"iss":"\#(Self.issuer)","aud":"\#(aud)","bid":"com.example.game","exp":\#(exp)}"#
        }
        #expect(code(try resigned(claims: claims("appstoreconnect-v1"))) == nil)
        #expect(code(try resigned(claims: claims("appstoreconnect-v2"))) == .wrongAudience)
        #expect(
            code(try resigned(header: #"{"alg":"HS256","kid":"ABC123DEFG"}"#, claims: claims("appstoreconnect-v1")))
                == .unsupportedAlgorithm)
        #expect(code(try resigned(header: #"{"alg":"ES256"}"#, claims: claims("appstoreconnect-v1"))) == .unknownKey)
    }

    @Test("claims of the wrong type and text that is not a JWS are malformed")
    func malformed() throws {
        let claims = #"{"iss":"\#(Self.issuer)","aud":"appstoreconnect-v1","bid":"com.example.game","exp":"soon"}"#
        #expect(code(try resigned(claims: claims)) == .malformed)
        #expect(code(Array("not-a-token".utf8)) == .malformed)
        #expect(code(Array("a.b".utf8)) == .malformed)
        #expect(
            code([UInt8](repeating: UInt8(ascii: "a"), count: APITokenVerifier.maximumTokenBytes + 1)) == .malformed)
    }

    @Test("a key that is not EC P-256 is refused for API tokens")
    func rsaKeyRefused() throws {
        let rsa = try PrivateKey.generate(.rsa2048)
        #expect(throws: APITokenError.self) {
            try APIKey(
                issuerID: Self.issuer, keyID: "RSA", publicKey: PublicKey(pemOrDER: Array(rsa.publicKeyPEM.utf8)))
        }
        #expect(throws: CryptoError.self) { try PublicKey(pemOrDER: Array("-----BEGIN PUBLIC KEY-----\n".utf8)) }
    }
}
