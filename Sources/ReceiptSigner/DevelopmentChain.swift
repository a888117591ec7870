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

    /// Creates new keys and certificates. All three certificates share the validity period given.
    public static func create(
        algorithm: GeneratedKeyAlgorithm,
        notBefore: Int64 = defaultValidity.notBefore,
        notAfter: Int64 = defaultValidity.notAfter
    ) throws(CryptoError) -> DevelopmentChain {
        let rootKey = try PrivateKey.generate(algorithm)
        let root = try CertificateIssuer.issue(
            commonName: "openreceipt TEST ONLY Root CA", organization: organization, role: .root, subjectKey: rootKey,
            issuer: nil, notBefore: notBefore, notAfter: notAfter)
        let intermediateKey = try PrivateKey.generate(algorithm)
        let intermediate = try CertificateIssuer.issue(
            commonName: "openreceipt TEST ONLY Intermediate CA", organization: organization, role: .intermediate,
            subjectKey: intermediateKey, issuer: (root, rootKey), notBefore: notBefore, notAfter: notAfter)
        let signerKey = try PrivateKey.generate(algorithm)
        let signer = try CertificateIssuer.issue(
            commonName: "openreceipt TEST ONLY Receipt Signing", organization: organization, role: .signer,
            subjectKey: signerKey, issuer: (intermediate, intermediateKey), notBefore: notBefore, notAfter: notAfter)
        return DevelopmentChain(
            root: root, rootKey: rootKey, intermediate: intermediate, intermediateKey: intermediateKey, signer: signer,
            signerKey: signerKey)
    }

    /// The signer's key and certificate with the intermediate as chain.
    public var credentials: SigningCredentials {
        get throws(SigningError) { try SigningCredentials(key: signerKey, certificate: signer, chain: [intermediate]) }
    }
}
