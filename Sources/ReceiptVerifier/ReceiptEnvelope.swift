import ReceiptCMS
import ReceiptCompression
import ReceiptCrypto
import ReceiptDER
import ReceiptModel

/// A receipt's CMS SignedData with its shape checked and its certificates decoded: one signer, attached content
/// of type `data`, a supported algorithm, and an embedded certificate that matches the signer. Nothing here
/// decides whether to trust it.
public struct ReceiptEnvelope: Sendable {
    public let signedData: CMSSignedData
    public let signerInfo: CMSSignerInfo
    /// Every embedded certificate, in the order given.
    public let certificates: [Certificate]
    public let signerCertificate: Certificate
    /// The signed octets: the payload itself, or for a compressed receipt the DER of its CompressedData.
    public let content: ArraySlice<UInt8>
    public let digestAlgorithm: DigestAlgorithm

    /// The subject of `der` when it is a whole X.509 certificate rather than a receipt (a common mistake), else nil.
    private static func certificateSubject(_ der: [UInt8]) -> String? {
        // A ContentInfo starts with an OID; a certificate with its TBSCertificate, a SEQUENCE.
        guard der.count > 4, der[0] == 0x30, der.dropFirst(2).prefix(3).contains(0x30),
            let certificate = try? Certificate(derEncoded: der)
        else { return nil }
        return certificate.subject
    }

    /// Reads `input` (DER or base64 text) within `limits`, taking certificates already decoded from
    /// `certificateCache` when one is given.
    public init(
        input: [UInt8],
        limits: VerificationLimits = VerificationLimits(),
        certificateCache: CertificateCache? = nil
    ) throws(ReceiptVerificationError) {
        let der = try ReceiptInput.derBytes(from: input, limits: limits)
        let signedData: CMSSignedData
        do {
            signedData = try CMSSignedData(berEncoded: der[...], maximumDepth: limits.maximumDepth)
        } catch {
            if case .malformed(let derError) = error.reason, case .nestingTooDeep = derError.reason {
                throw ReceiptVerificationError(.tooLarge, "CMS envelope: \(error)")
            }
            if case .unsupported = error.reason {
                throw ReceiptVerificationError(.malformed, "CMS envelope: \(error)", unsupportedShape: true)
            }
            if let subject = Self.certificateSubject(der) {
                throw ReceiptVerificationError(
                    .malformed,
                    "the input is an X.509 certificate (\(subject)), not a receipt; a certificate to trust is given "
                        + "as a trust anchor")
            }
            throw ReceiptVerificationError(.malformed, "CMS envelope: \(error)")
        }
        guard signedData.signerInfos.count == 1, let signerInfo = signedData.signerInfos.first else {
            throw ReceiptVerificationError(
                .wrongSignerCount,
                "SignedData.signerInfos has \(signedData.signerInfos.count) signers; exactly one is required")
        }
        guard signedData.contentType == .cmsData || signedData.contentType == .cmsCompressedData else {
            throw ReceiptVerificationError(
                .wrongContentType,
                "encapContentInfo.eContentType is \(signedData.contentType), not data (1.2.840.113549.1.7.1) "
                    + "or compressedData (1.2.840.113549.1.9.16.1.9)")
        }
        guard let content = signedData.content else {
            throw ReceiptVerificationError(.missingContent, "encapContentInfo has no eContent: the payload is detached")
        }
        let digestAlgorithm = try Self.digestAlgorithm(signerInfo.digestAlgorithm)
        // Every digest SignedData announces must be one we support, the signer's among them, as OpenSSL requires.
        var announcesSignerDigest = false
        for identifier in signedData.digestAlgorithms where try Self.digestAlgorithm(identifier) == digestAlgorithm {
            announcesSignerDigest = true
        }
        guard announcesSignerDigest else {
            throw ReceiptVerificationError(
                .unsupportedAlgorithm,
                "SignedData.digestAlgorithms does not list the signer's \(digestAlgorithm.rawValue)")
        }

        var certificates: [Certificate] = []
        certificates.reserveCapacity(signedData.certificates.count)
        for (index, encoded) in signedData.certificates.enumerated() {
            do {
                certificates.append(try certificateCache?.certificate(encoded) ?? Certificate(derEncoded: encoded))
            } catch {
                throw ReceiptVerificationError(.invalidCertificate, "SignedData.certificates[\(index)]: \(error)")
            }
        }
        guard let signer = certificates.first(where: { Self.identifies(signerInfo.signerIdentifier, $0) }) else {
            throw ReceiptVerificationError(
                .signerCertificateMissing,
                "none of the \(certificates.count) embedded certificates matches the SignerInfo's signer identifier")
        }
        // Set last, after every check that can throw: set earlier, they make the optimizer copy the whole envelope.
        self.signedData = signedData
        self.signerInfo = signerInfo
        self.content = content
        self.digestAlgorithm = digestAlgorithm
        self.certificates = certificates
        signerCertificate = signer
    }

    /// The certificates other than the signer's, which may serve as intermediates (never as anchors).
    public var otherCertificates: [Certificate] { certificates.filter { $0 !== signerCertificate } }

    /// Checks the signature with the signer certificate's key: over the payload itself (Apple's layout), or over
    /// the signed attributes after checking their content type and message digest.
    public func verifySignature() throws(ReceiptVerificationError) {
        let key: PublicKey
        do {
            key = try signerCertificate.publicKey
        } catch {
            throw ReceiptVerificationError(.invalidCertificate, "signer certificate: \(error)")
        }
        try Self.checkSignatureAlgorithm(signerInfo.signatureAlgorithm, digest: digestAlgorithm, key: key.algorithm)
        var signedBytes = content
        if let attributes = signerInfo.signedAttributes {
            try checkSignedAttributes(attributes)
            signedBytes = attributes.signedBytes[...]
        }
        guard
            key.isValidSignature(
                signerInfo.signature, forDigest: digestAlgorithm.hash(signedBytes), digest: digestAlgorithm)
        else {
            throw ReceiptVerificationError(
                .invalidSignature,
                "the signature does not verify with the signer certificate's key over the "
                    + (signerInfo.signedAttributes == nil ? "payload" : "signed attributes"))
        }
    }

    /// Whether the signed content is a CompressedData (RFC 3274) rather than the payload itself.
    public var isCompressed: Bool { signedData.contentType == .cmsCompressedData }

    /// The payload: the signed content itself, or, for a compressed receipt, its zlib content inflated within
    /// `limits`. Call it after ``verifySignature()`` so that only authenticated bytes are inflated.
    public func payload(limits: VerificationLimits = VerificationLimits()) throws(ReceiptVerificationError)
        -> ArraySlice<UInt8>
    {
        try Self.payload(of: content, contentType: signedData.contentType, limits: limits)
    }

    /// The payload carried by signed `content` of `contentType` (data, or CompressedData holding data).
    static func payload(
        of content: ArraySlice<UInt8>,
        contentType: ASN1ObjectIdentifier,
        limits: VerificationLimits
    ) throws(ReceiptVerificationError) -> ArraySlice<UInt8> {
        guard contentType == .cmsCompressedData else { return content }
        let compressed: CMSCompressedData
        do {
            compressed = try CMSCompressedData(derEncoded: content)
        } catch {
            throw ReceiptVerificationError(.unreadablePayload, "compressed content: \(error)")
        }
        guard compressed.compressionAlgorithm.algorithm == .zlibCompression,
            compressed.compressionAlgorithm.parameters == nil
        else {
            throw ReceiptVerificationError(
                .unsupportedAlgorithm,
                "CompressedData.compressionAlgorithm is \(compressed.compressionAlgorithm.algorithm) with "
                    + (compressed.compressionAlgorithm.parameters == nil ? "no parameters" : "parameters")
                    + "; only id-alg-zlibCompress (1.2.840.113549.1.9.16.3.8) without parameters is supported")
        }
        guard compressed.contentType == .cmsData else {
            throw ReceiptVerificationError(
                .wrongContentType, "CompressedData holds \(compressed.contentType), not data (1.2.840.113549.1.7.1)")
        }
        do {
            return try Zlib.inflate(
                compressed.compressedContent, maximumOutput: limits.maximumDecompressedSize,
                maximumRatio: limits.maximumCompressionRatio)[...]
        } catch {
            if case .malformed = error {
                throw ReceiptVerificationError(.unreadablePayload, "compressed payload \(error)")
            }
            throw ReceiptVerificationError(.tooLarge, "compressed payload \(error)")
        }
    }

    /// Decodes the payload as a receipt.
    public func receipt(limits: VerificationLimits = VerificationLimits()) throws(ReceiptVerificationError) -> Receipt {
        try Self.receipt(from: try payload(limits: limits), limits: limits)
    }

    /// Decodes `payload` as a receipt, mapping each payload rule to its error code.
    static func receipt(from payload: ArraySlice<UInt8>, limits: VerificationLimits) throws(ReceiptVerificationError)
        -> Receipt
    {
        do {
            return try Receipt(payload: payload, maximumPurchases: limits.maximumPurchases)
        } catch {
            let code: ReceiptVerificationError.Code =
                switch error.reason {
                case .malformed: .unreadablePayload
                case .duplicateAttribute: .duplicateAttribute
                case .missingAttribute: .missingField
                case .invalidValue: .invalidField
                case .tooManyPurchases: .tooLarge
                }
            throw ReceiptVerificationError(code, "\(error)")
        }
    }

    private func checkSignedAttributes(_ attributes: CMSSignedAttributes) throws(ReceiptVerificationError) {
        func single(_ type: ASN1ObjectIdentifier, _ name: String) throws(ReceiptVerificationError) -> ArraySlice<UInt8>
        {
            guard let attribute = attributes.attributes.first(where: { $0.type == type }) else {
                throw ReceiptVerificationError(.invalidSignedAttributes, "signed attributes lack \(name)")
            }
            guard attribute.values.count == 1, let value = attribute.values.first else {
                throw ReceiptVerificationError(
                    .invalidSignedAttributes, "signed attribute \(name) must have exactly one value")
            }
            return value
        }
        let contentType = try single(.cmsContentTypeAttribute, "content-type")
        guard (try? ASN1Node.parse(contentType, rules: .der).objectIdentifier()) == signedData.contentType else {
            throw ReceiptVerificationError(
                .invalidSignedAttributes,
                "signed content-type attribute differs from eContentType \(signedData.contentType)")
        }
        let digestValue = try single(.cmsMessageDigestAttribute, "message-digest")
        guard let node = try? ASN1Node.parse(digestValue, rules: .der), node.tag == .octetString else {
            throw ReceiptVerificationError(
                .invalidSignedAttributes, "signed message-digest attribute is not an OCTET STRING")
        }
        guard constantTimeEquals(node.content, digestAlgorithm.hash(content)[...]) else {
            throw ReceiptVerificationError(
                .invalidSignature, "signed message-digest attribute does not match the payload")
        }
    }

    private static func digestAlgorithm(_ identifier: CMSAlgorithmIdentifier) throws(ReceiptVerificationError)
        -> DigestAlgorithm
    {
        guard identifier.parameters == nil || Self.isNull(identifier.parameters) else {
            throw ReceiptVerificationError(.unsupportedAlgorithm, "digestAlgorithm parameters must be absent or NULL")
        }
        switch identifier.algorithm {
        case .sha1: return .sha1
        case .sha256: return .sha256
        default:
            throw ReceiptVerificationError(
                .unsupportedAlgorithm,
                "digestAlgorithm \(identifier.algorithm) is not supported (only SHA-1 and SHA-256)")
        }
    }

    private static func checkSignatureAlgorithm(
        _ identifier: CMSAlgorithmIdentifier,
        digest: DigestAlgorithm,
        key: KeyAlgorithm
    ) throws(ReceiptVerificationError) {
        let rsa: Bool
        let impliedDigest: DigestAlgorithm?
        switch identifier.algorithm {
        case .rsaEncryption: (rsa, impliedDigest) = (true, nil)
        case .sha1WithRSAEncryption: (rsa, impliedDigest) = (true, .sha1)
        case .sha256WithRSAEncryption: (rsa, impliedDigest) = (true, .sha256)
        case .ecdsaWithSHA1: (rsa, impliedDigest) = (false, .sha1)
        case .ecdsaWithSHA256: (rsa, impliedDigest) = (false, .sha256)
        default:
            throw ReceiptVerificationError(
                .unsupportedAlgorithm,
                "signatureAlgorithm \(identifier.algorithm) is not supported (RSA PKCS#1 v1.5 or ECDSA with SHA-1/SHA-256)"
            )
        }
        guard identifier.parameters == nil || (rsa && isNull(identifier.parameters)) else {
            throw ReceiptVerificationError(
                .unsupportedAlgorithm, "signatureAlgorithm \(identifier.algorithm) has unexpected parameters")
        }
        if let impliedDigest, impliedDigest != digest {
            throw ReceiptVerificationError(
                .unsupportedAlgorithm,
                "signatureAlgorithm \(identifier.algorithm) does not match digestAlgorithm \(digest.rawValue)")
        }
        switch (rsa, key) {
        case (true, .rsa), (false, .ec): return
        default:
            throw ReceiptVerificationError(
                .invalidSignature,
                "signatureAlgorithm \(identifier.algorithm) cannot be used with the signer's \(key) key")
        }
    }

    /// Whether `parameters` is the encoding of NULL (05 00).
    private static func isNull(_ parameters: ArraySlice<UInt8>?) -> Bool {
        guard let parameters, parameters.count == 2 else { return false }
        return parameters.first == 0x05 && parameters.last == 0x00
    }

    private static func identifies(_ identifier: CMSSignerIdentifier, _ certificate: Certificate) -> Bool {
        switch identifier {
        case .issuerAndSerialNumber(let issuer, let serialNumber):
            guard let fields = try? certificate.issuerAndSerialNumber(), bytesEqual(fields.serialNumber, serialNumber)
            else { return false }
            // Names usually match byte for byte; RFC 5280 also lets them differ in case and spacing.
            return bytesEqual(fields.issuer, issuer) || certificate.issuerMatches(encodedName: issuer)
        case .subjectKeyIdentifier(let keyIdentifier):
            return certificate.subjectKeyIdentifier.map { bytesEqual($0[...], keyIdentifier) } ?? false
        }
    }
}
