import ReceiptCrypto

/// A throw-away certificate chain for development and tests: root → intermediate → receipt signer, with their
/// keys. Every name says TEST ONLY; never ship these keys or trust this root in production.
public struct DevelopmentChain: Sendable {
    public let root: Certificate
    public let rootKey: PrivateKey
    public let intermediate: Certificate
    public let intermediateKey: PrivateKey
    public let signer: Certificate
    public let signerKey: PrivateKey

    /// 2000-01-01T00:00:00Z and 2100-01-01T00:00:00Z: wide enough for receipts dated anywhere in between.
    public static let defaultValidity: (notBefore: Int64, notAfter: Int64) = (946_684_800, 4_102_444_800)

    static let organization = "openreceipt development (TEST ONLY: never trust in production)"

    /// Which extensions the chain carries beyond what each role needs.
    public enum Profile: String, CaseIterable, Sendable {
        /// This project's own chain: no Apple markers.
        case standard
        /// Apple's marker extensions on the intermediate and the signer, so that clients written against Apple's
        /// libraries (which insist on them) accept it. For testing such clients only.
        case appleCompatible = "apple-compatible"
    }

    /// Creates new keys and certificates. All three certificates share the validity period given.
    public static func create(
        algorithm: GeneratedKeyAlgorithm,
        profile: Profile = .standard,
        notBefore: Int64 = defaultValidity.notBefore,
        notAfter: Int64 = defaultValidity.notAfter
    ) throws(CryptoError) -> DevelopmentChain {
        let apple = profile == .appleCompatible
        let rootKey = try PrivateKey.generate(algorithm)
        let root = try CertificateIssuer.issue(
            commonName: "openreceipt TEST ONLY Root CA", organization: organization, role: .root, subjectKey: rootKey,
            issuer: nil, notBefore: notBefore, notAfter: notAfter)
        let intermediateKey = try PrivateKey.generate(algorithm)
        let intermediate = try CertificateIssuer.issue(
            commonName: "openreceipt TEST ONLY Intermediate CA", organization: organization, role: .intermediate,
            subjectKey: intermediateKey, issuer: (root, rootKey), notBefore: notBefore, notAfter: notAfter,
            markers: apple ? [AppleCertificates.intermediateMarker] : [])
        let signerKey = try PrivateKey.generate(algorithm)
        let signer = try CertificateIssuer.issue(
            commonName: "openreceipt TEST ONLY Receipt Signing", organization: organization, role: .signer,
            subjectKey: signerKey, issuer: (intermediate, intermediateKey), notBefore: notBefore, notAfter: notAfter,
            markers: apple ? [AppleCertificates.signingLeafMarker] : [])
        return DevelopmentChain(
            root: root, rootKey: rootKey, intermediate: intermediate, intermediateKey: intermediateKey, signer: signer,
            signerKey: signerKey)
    }

    /// The signer's key and certificate with the intermediate as chain.
    public var credentials: SigningCredentials {
        get throws(SigningError) { try SigningCredentials(key: signerKey, certificate: signer, chain: [intermediate]) }
    }
}
