import ReceiptCrypto
import ReceiptDER
import ReceiptModel

/// What the caller expects of a receipt besides a trusted signature.
public struct VerificationOptions: Hashable, Sendable {
    /// Require this exact bundle id (field 2).
    public var bundleID: String?
    /// Require this exact application version (field 3).
    public var applicationVersion: String?
    /// Require the receipt to be bound to this device (field 5).
    public var deviceIdentifier: DeviceIdentifier?
    /// Check certificate validity at this instant instead of the receipt's creation date.
    public var validationTime: ReceiptDate?

    public init(
        bundleID: String? = nil,
        applicationVersion: String? = nil,
        deviceIdentifier: DeviceIdentifier? = nil,
        validationTime: ReceiptDate? = nil
    ) {
        self.bundleID = bundleID
        self.applicationVersion = applicationVersion
        self.deviceIdentifier = deviceIdentifier
        self.validationTime = validationTime
    }
}

/// A receipt that passed every check, with the evidence.
public struct VerifiedReceipt: Sendable {
    public let receipt: Receipt
    /// The chain that was validated: signer first, pinned anchor last.
    public let chain: [Certificate]
    /// The instant at which the certificates were checked.
    public let validationTime: ReceiptDate
    public let digestAlgorithm: DigestAlgorithm
}

/// Proves that a receipt is genuine, untampered and meant for this app and device.
///
/// A receipt is accepted only when: its envelope has the shape of an app receipt; its signature verifies with the
/// embedded signer certificate; its payload is a well-formed receipt; the signer chains to one of the pinned
/// anchors (never to a certificate the receipt brings along, never to the system store) at the receipt's creation
/// date (or a time the caller gives), every issuer being a CA; and, when the chain ends at one of Apple's roots,
/// the signer and intermediate carry Apple's receipt-signing marker extensions. A receipt signed by this project
/// and one signed by Apple go through the same checks; only the anchor differs.
public struct ReceiptVerifier: Sendable {
    /// When to require Apple's marker extensions on the signer and intermediate.
    public enum MarkerPolicy: Hashable, Sendable {
        /// When the chain ends at one of Apple's roots (the default; other anchors are not Apple's to mark).
        case underAppleRoots
        /// Under every anchor, for chains made to look like Apple's (test chains for clients of Apple's libraries).
        case always
    }

    public let anchors: TrustAnchors
    public let limits: VerificationLimits
    public let markerPolicy: MarkerPolicy
    /// Decoded certificates, which may be shared with other verifiers.
    public private(set) var certificateCache: CertificateCache
    /// Certificates that configuration no longer trusts: a chain that contains one is untrusted.
    private let revoked: Set<[UInt8]>
    private var chainVerdicts = ChainVerdictCache()
    /// How many chain verdicts this verifier holds.
    var chainVerdictCount: Int { chainVerdicts.count }

    /// - Parameters:
    ///   - revokedCertificates: certificates to distrust even where they chain to an anchor (a compromised
    ///     intermediate or signer, say).
    ///   - certificateCache: where decoded certificates are kept; give one cache to several verifiers to share it.
    ///     The anchors are kept there too, for receipts that carry a copy of theirs.
    /// - Throws: ``CryptoError`` when no anchor is given.
    public init(
        trustAnchors: [Certificate],
        limits: VerificationLimits = VerificationLimits(),
        markerPolicy: MarkerPolicy = .underAppleRoots,
        revokedCertificates: [Certificate] = [],
        certificateCache: CertificateCache = CertificateCache()
    ) throws(CryptoError) {
        anchors = try TrustAnchors(trustAnchors)
        self.limits = limits
        self.markerPolicy = markerPolicy
        self.revoked = Set(revokedCertificates.map(\.derEncoded))
        certificateCache.keep(trustAnchors)
        self.certificateCache = certificateCache
    }

    /// This verifier with caches of its own (decoded certificates and chain verdicts), holding copies of what this
    /// verifier's caches hold now (``Certificate/independentCopy()``), and the same anchors, limits and policies:
    /// for a thread that verifies many receipts beside others. Threads that share the caches share the certificates
    /// they hold, and each hit counts references on objects the other threads count too (0.6 µs of CPU a receipt in
    /// a batch on two cores); copies cost microseconds where OpenSSL 3.0 decodes a certificate in about 300 µs and
    /// validates a chain in about 200. What either verifier caches later, it caches for itself.
    public func withOwnCaches() -> ReceiptVerifier {
        var copy = self
        var copies: [DERKey: Certificate] = [:]
        copy.certificateCache = CertificateCache(copying: certificateCache, copies: &copies)
        copy.chainVerdicts = ChainVerdictCache(copying: chainVerdicts, copies: copies)
        return copy
    }

    /// Which CMS parser reads the envelope.
    public enum EnvelopeParser: Hashable, Sendable {
        /// This project's zero-copy BER reader; OpenSSL's CMS parser only for the shapes it does not read
        /// (certificate choices other than X.509, certificates not in DER).
        case automatic
        /// OpenSSL's CMS parser for the envelope and the signature (slower: it decodes every certificate).
        /// Everything after that is the same: payload rules, chain, policies, options.
        case openSSL
    }

    /// Verifies a receipt given as DER or base64 text.
    public func verify(
        _ input: [UInt8],
        options: VerificationOptions = VerificationOptions(),
        parser: EnvelopeParser = .automatic
    ) throws(ReceiptVerificationError) -> VerifiedReceipt {
        if parser == .openSSL { return try verifyThroughOpenSSL(input, options: options) }
        let envelope: ReceiptEnvelope
        do {
            envelope = try ReceiptEnvelope(input: input, limits: limits, certificateCache: certificateCache)
        } catch {
            guard error.isUnsupportedShape else { throw error }
            return try verifyThroughOpenSSL(input, options: options)
        }
        try envelope.verifySignature()
        let receipt = try envelope.receipt(limits: limits)
        let time = options.validationTime ?? receipt.creationDate
        let chain = try trustedChain(signer: envelope.signerCertificate, others: envelope.otherCertificates, at: time)
        try check(receipt, against: options)
        return VerifiedReceipt(
            receipt: receipt, chain: chain, validationTime: time, digestAlgorithm: envelope.digestAlgorithm)
    }

    /// The same checks with OpenSSL's CMS parser reading the envelope and checking the signature.
    private func verifyThroughOpenSSL(_ input: [UInt8], options: VerificationOptions) throws(ReceiptVerificationError)
        -> VerifiedReceipt
    {
        let der = try ReceiptInput.derBytes(from: input, limits: limits)
        let signed: OpenSSLSignedContent
        switch OpenSSLCMSVerification.signedContent(der) {
        case .success(let content): signed = content
        case .failure(.unparseable):
            throw ReceiptVerificationError(.malformed, "OpenSSL's CMS parser cannot read it as one SignedData")
        case .failure(.signerCount(let count)):
            throw ReceiptVerificationError(
                .wrongSignerCount, "SignedData.signerInfos has \(count) signers; exactly one is required")
        case .failure(.invalidSignature(let reason)):
            throw ReceiptVerificationError(.invalidSignature, "OpenSSL: \(reason)")
        }
        guard let digest = signed.digest else {
            throw ReceiptVerificationError(
                .unsupportedAlgorithm, "digestAlgorithm is not supported (only SHA-1 and SHA-256)")
        }
        guard let contentType = ASN1ObjectIdentifier(signed.contentType),
            contentType == .cmsData || contentType == .cmsCompressedData
        else {
            throw ReceiptVerificationError(.wrongContentType, "encapContentInfo.eContentType is \(signed.contentType)")
        }
        let payload = try ReceiptEnvelope.payload(of: signed.content[...], contentType: contentType, limits: limits)
        let receipt = try ReceiptEnvelope.receipt(from: payload, limits: limits)
        let time = options.validationTime ?? receipt.creationDate
        let others = signed.certificates.filter { $0 != signed.signer }
        let chain = try trustedChain(signer: signed.signer, others: others, at: time)
        try check(receipt, against: options)
        return VerifiedReceipt(receipt: receipt, chain: chain, validationTime: time, digestAlgorithm: digest)
    }

    /// The validated chain for the envelope's certificates at `time`.
    ///
    /// The verdict on the same certificate bytes is computed once without validity periods and cached with the
    /// window in which every certificate of its chain is valid; a receipt whose time falls inside that window
    /// needs nothing more. Outside it, or for a chain never seen, full validation at `time` decides. A cached
    /// verdict can only repeat what full validation would say.
    private func trustedChain(signer: Certificate, others: [Certificate], at time: ReceiptDate)
        throws(ReceiptVerificationError) -> [Certificate]
    {
        var key: [DERKey] = []
        key.reserveCapacity(1 + others.count)
        key.append(DERKey(signer.derEncoded[...]))
        for certificate in others { key.append(DERKey(certificate.derEncoded[...])) }
        let verdict: ChainVerdict
        if let cached = chainVerdicts.verdict(for: key) {
            verdict = cached
        } else {
            verdict = ChainVerdict(
                result: Result { () throws(ReceiptVerificationError) in
                    try validateChain(signer: signer, others: others, at: nil)
                })
            chainVerdicts.store(verdict, for: key)
        }
        let chain = try verdict.result.get()
        if verdict.validityWindow.contains(time.secondsSince1970) { return chain }
        return try validateChain(signer: signer, others: others, at: time)
    }

    /// Full validation of the envelope's chain at `time` (or at no time: every check but validity periods),
    /// followed by this verifier's policies.
    private func validateChain(signer: Certificate, others: [Certificate], at time: ReceiptDate?)
        throws(ReceiptVerificationError) -> [Certificate]
    {
        let chain: [Certificate]
        switch anchors.validateChain(leaf: signer, intermediates: others, at: time?.secondsSince1970)
        {
        case .success(let validated): chain = validated
        case .failure(let error):
            let code: ReceiptVerificationError.Code =
                switch error.reason {
                case .untrusted: .untrustedChain
                case .expired: .certificateExpired
                case .notYetValid: .certificateNotYetValid
                case .invalidCertificate: .invalidCertificate
                case .invalidPurpose: .invalidCertificatePurpose
                }
            throw ReceiptVerificationError(
                code, "certificate chain" + (time.map { " at \($0.rfc3339)" } ?? "") + ": \(error)")
        }
        for (depth, certificate) in chain.enumerated() where revoked.contains(certificate.derEncoded) {
            throw ReceiptVerificationError(
                .untrustedChain, "certificate \(depth) (\(certificate.subject)) is revoked by configuration")
        }
        for (depth, certificate) in chain.enumerated().dropFirst() where !certificate.isCertificateAuthority {
            throw ReceiptVerificationError(
                .invalidCertificate,
                "certificate \(depth) (\(certificate.subject)) issues another certificate but is not a CA "
                    + "(basicConstraints cA is not TRUE)")
        }
        if signer.keyUsageForbidsSigning {
            throw ReceiptVerificationError(
                .invalidCertificatePurpose, "signer certificate's keyUsage does not include digitalSignature")
        }
        let underAppleRoot = chain.last.map(AppleCertificates.isAppleRoot) ?? false
        if underAppleRoot || markerPolicy == .always, let violation = AppleCertificates.markerViolation(in: chain) {
            throw ReceiptVerificationError(.invalidCertificatePurpose, violation)
        }
        return chain
    }

    private func check(_ receipt: Receipt, against options: VerificationOptions) throws(ReceiptVerificationError) {
        if let expected = options.bundleID, receipt.bundleID != expected {
            throw ReceiptVerificationError(
                .wrongBundleID, "bundle_id (field 2) is \"\(receipt.bundleID)\", expected \"\(expected)\"")
        }
        if let expected = options.applicationVersion, receipt.applicationVersion != expected {
            let found = receipt.applicationVersion.map { "\"\($0)\"" } ?? "absent"
            throw ReceiptVerificationError(
                .wrongAppVersion, "application_version (field 3) is \(found), expected \"\(expected)\"")
        }
        if let device = options.deviceIdentifier {
            guard let input = receipt.deviceBindingInput(for: device), let hash = receipt.sha1Hash else {
                throw ReceiptVerificationError(
                    .deviceHashMismatch,
                    "the receipt has no device binding (opaque_value, field 4, and sha1_hash, field 5)")
            }
            guard constantTimeEquals(DigestAlgorithm.sha1.hash(input), hash) else {
                throw ReceiptVerificationError(
                    .deviceHashMismatch,
                    "sha1_hash (field 5) is not SHA-1(device \(device) ‖ opaque_value ‖ bundle_id): the receipt belongs to another device"
                )
            }
        }
    }
}
