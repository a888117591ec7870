import ReceiptCrypto

/// A signing key with its certificate and the chain to write after it, checked to belong together.
public struct SigningCredentials: Sendable {
    public let key: PrivateKey
    public let certificate: Certificate
    /// Certificates written after the signer's (intermediate first; the root may follow but need not).
    public let chain: [Certificate]

    /// - Throws: ``SigningError`` when the key is not RSA-2048+ or EC P-256, does not match the certificate, or a
    ///   chain certificate is not the issuer of the one before it.
    public init(key: PrivateKey, certificate: Certificate, chain: [Certificate] = []) throws(SigningError) {
        guard key.algorithm.isSupportedForSigning else {
            throw SigningError(
                .invalidKey, "the key is \(key.algorithm); receipts are signed with RSA-2048 (or larger) or EC P-256")
        }
        guard key.matches(certificate) else {
            throw SigningError(
                .keyCertificateMismatch, "the private key does not match the certificate \"\(certificate.subject)\"")
        }
        for (child, parent) in zip([certificate] + chain, chain) where child.issuer != parent.subject {
            throw SigningError(
                .invalidCertificate,
                "chain certificate \"\(parent.subject)\" did not issue \"\(child.subject)\" (issued by \"\(child.issuer)\")"
            )
        }
        self.key = key
        self.certificate = certificate
        self.chain = chain
    }

    /// Reads PEM or DER files' contents: a private key, the signer certificate, and optional chain certificates.
    public init(keyFile: [UInt8], certificateFile: [UInt8], chainFiles: [[UInt8]] = []) throws(SigningError) {
        let key: PrivateKey
        do {
            key = try PrivateKey(pemOrDER: keyFile)
        } catch {
            throw SigningError(.invalidKey, "private key: \(error)")
        }
        let certificate: Certificate
        var chain: [Certificate] = []
        do {
            let certificates = try Certificate.load(pemOrDER: certificateFile)
            guard let first = certificates.first else {
                throw SigningError(.invalidCertificate, "no certificate found")
            }
            certificate = first
            chain = Array(certificates.dropFirst())
            for file in chainFiles { chain += try Certificate.load(pemOrDER: file) }
        } catch let error as SigningError {
            throw error
        } catch {
            throw SigningError(.invalidCertificate, "certificate: \(error)")
        }
        try self.init(key: key, certificate: certificate, chain: chain)
    }
}
