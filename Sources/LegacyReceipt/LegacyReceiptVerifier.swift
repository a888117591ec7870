import ReceiptCrypto
import ReceiptDER
import ReceiptModel
import StrictJSON

/// A legacy transaction receipt that passed every check, with the evidence.
public struct VerifiedLegacyReceipt: Sendable {
    public let receipt: LegacyTransactionReceipt
    /// The chain that was validated: the receipt's leaf first, the pinned anchor last.
    public let chain: [Certificate]
    /// The instant at which the certificates were checked.
    public let validationTime: ReceiptDate

    /// The verified purchase info.
    public var purchaseInfo: LegacyPurchaseInfo { receipt.purchaseInfo }

    /// The purchase info in the shape of `receipt` in Apple's iOS 6 verifyReceipt response: the signed keys with
    /// `-` turned into `_`, the signed string values, in the signed order.
    public var verifyReceiptJSON: JSONObject { receipt.purchaseInfo.verifyReceiptJSON }
}

/// Proves that a legacy transaction receipt's purchase info is what Apple signed.
///
/// A receipt is accepted only when: it parses strictly; it has a signature of version 2 or 3 whose lengths add up;
/// `signing-status`, when present, is "0"; its purchase info names the bundle, product, transaction, quantity and
/// purchase date; the leaf certificate in the signature blob decodes and holds an RSA key of the size the version
/// calls for; the RSA-SHA1 signature verifies over the version byte followed by the decoded purchase info; and the
/// leaf chains through the supplied intermediates to a pinned anchor (never to a certificate the receipt carries,
/// never to the system store) at the purchase date or a time the caller gives. When the anchor is one of Apple's
/// roots, the leaf and its issuer must also carry Apple's marker extensions for legacy receipts, because every Apple
/// developer certificate chains to the same root through the same WWDR intermediate.
///
/// The receipt does not carry its intermediate: give Apple iTunes Store Certification Authority (version 2) and
/// Apple Worldwide Developer Relations Certification Authority G1 (version 3), both in `certs/apple/`.
public struct LegacyReceiptVerifier: Sendable {
    /// Marker extensions Apple puts in legacy receipt chains, by signature version.
    public enum Markers {
        /// In the version 2 leaf (CN=PurchaseReceiptCertificate, OU=Apple iTunes Store).
        public static let iTunesStorePurchaseReceiptLeaf = ASN1ObjectIdentifier(arcs: 1, 2, 840, 113_635, 100, 6, 5, 1)
        /// In Apple iTunes Store Certification Authority.
        public static let iTunesStoreIntermediate = ASN1ObjectIdentifier(arcs: 1, 2, 840, 113_635, 100, 6, 2, 2)

        /// The markers the leaf and its issuer must carry for a signature version, under Apple's roots.
        public static func required(forVersion version: UInt8) -> (
            leaf: ASN1ObjectIdentifier, intermediate: ASN1ObjectIdentifier
        )? {
            switch version {
            case 2: (iTunesStorePurchaseReceiptLeaf, iTunesStoreIntermediate)
            case 3: (AppleCertificates.signingLeafMarker, AppleCertificates.intermediateMarker)
            default: nil
            }
        }
    }

    public let anchors: TrustAnchors
    /// Certificates offered to build the chain from; used only when they lead to an anchor.
    public let intermediates: [Certificate]
    /// The input size limit.
    public let maximumSize: Int

    /// - Parameters:
    ///   - trustAnchors: the roots to pin (for Apple's receipts, `certs/apple/AppleIncRootCertificate.cer`).
    ///   - intermediates: the issuers the receipts do not carry.
    /// - Throws: ``CryptoError`` when no anchor is given.
    public init(
        trustAnchors: [Certificate],
        intermediates: [Certificate],
        maximumSize: Int = LegacyTransactionReceipt.defaultMaximumSize
    ) throws(CryptoError) {
        anchors = try TrustAnchors(trustAnchors)
        self.intermediates = intermediates
        self.maximumSize = maximumSize
    }

    /// Parses and verifies a receipt given as base64 text or as the property list itself.
    ///
    /// - Parameter time: when to check the certificates; by default the receipt's purchase date.
    public func verify(_ input: [UInt8], at time: ReceiptDate? = nil) throws(LegacyReceiptError)
        -> VerifiedLegacyReceipt
    {
        try verify(LegacyTransactionReceipt(parsing: input, maximumSize: maximumSize), at: time)
    }

    /// Verifies a parsed receipt.
    public func verify(_ receipt: LegacyTransactionReceipt, at time: ReceiptDate? = nil) throws(LegacyReceiptError)
        -> VerifiedLegacyReceipt
    {
        guard let signature = receipt.signature, let signedData = receipt.signedData else {
            throw LegacyReceiptError(
                .missingSignature, "the receipt has no \"signature\" field, so nothing vouches for its purchase-info")
        }
        if let status = receipt.signingStatus, status != "0" {
            throw LegacyReceiptError(.signingStatus, "signing-status is \"\(status)\"; a signed receipt has \"0\"")
        }
        try receipt.purchaseInfo.requireFieldsOfAPurchase()
        let leaf = try Self.leaf(of: signature)
        try Self.checkSignature(signature, over: signedData, with: leaf)
        guard let validationTime = time ?? receipt.purchaseInfo.purchaseDate else {
            throw LegacyReceiptError(.missingField, "purchase-info has no purchase date to validate the chain at")
        }
        let chain = try validateChain(leaf: leaf, version: signature.version, at: validationTime)
        try Self.checkMarkers(chain, version: signature.version)
        return VerifiedLegacyReceipt(receipt: receipt, chain: chain, validationTime: validationTime)
    }

    private static func leaf(of signature: LegacyTransactionReceipt.Signature) throws(LegacyReceiptError)
        -> Certificate
    {
        do {
            return try Certificate(derEncoded: signature.certificateDER)
        } catch {
            throw LegacyReceiptError(.invalidCertificate, "the certificate in the signature blob: \(error)")
        }
    }

    /// RSA PKCS#1 v1.5 with SHA-1, with a key whose size is the signature's length.
    private static func checkSignature(
        _ signature: LegacyTransactionReceipt.Signature,
        over signedData: [UInt8],
        with leaf: Certificate
    ) throws(LegacyReceiptError) {
        let key: PublicKey
        do {
            key = try leaf.publicKey
        } catch {
            throw LegacyReceiptError(.invalidCertificate, "the leaf's public key (\(leaf.subject)): \(error)")
        }
        let bits = signature.rsaSignature.count * 8
        guard case .rsa(let keyBits) = key.algorithm, keyBits == bits else {
            throw LegacyReceiptError(
                .invalidSignature,
                "signature version \(signature.version) is RSA-\(bits) with SHA-1, but the leaf's key is "
                    + "\(key.algorithm)")
        }
        guard key.isValidSignature(signature.rsaSignature[...], for: signedData[...], digest: .sha1) else {
            throw LegacyReceiptError(
                .invalidSignature,
                "the RSA-SHA1 signature does not verify over the version byte and purchase-info with the key of "
                    + "\(leaf.subject)")
        }
    }

    private func validateChain(leaf: Certificate, version: UInt8, at time: ReceiptDate) throws(LegacyReceiptError)
        -> [Certificate]
    {
        switch anchors.validateChain(leaf: leaf, intermediates: intermediates, at: time.secondsSince1970) {
        case .success(let chain):
            return chain
        case .failure(let error):
            let code: LegacyReceiptError.Code =
                switch error.reason {
                case .untrusted: .untrustedChain
                case .expired: .certificateExpired
                case .notYetValid: .certificateNotYetValid
                case .invalidCertificate, .invalidPurpose: .invalidCertificate
                }
            var message = "certificate chain at \(time.rfc3339): \(error)"
            if code == .untrustedChain, !intermediates.contains(where: { $0.subject == leaf.issuer }) {
                message += Self.missingIssuerAdvice(leaf: leaf, version: version)
            }
            throw LegacyReceiptError(code, message)
        }
    }

    /// What to add when the leaf's issuer was not given: receipts never carry it.
    private static func missingIssuerAdvice(leaf: Certificate, version: UInt8) -> String {
        let advice =
            "; the leaf's issuer (\(leaf.issuer)) was not given as an intermediate, and iOS 6 receipts do not "
            + "carry it"
        let file: String? =
            switch version {
            case 2: "AppleITunesStoreCertificationAuthority.cer"
            case 3: "AppleWWDRCA.cer"
            default: nil
            }
        guard let file, leaf.issuer.contains("O=Apple Inc.") else { return advice }
        return advice + ": give this project's certs/apple/\(file) as one (receipt verify "
            + "--intermediate, or the service's \"intermediates\")"
    }

    /// Under Apple's roots: the leaf carries its version's receipt marker and its issuer the matching
    /// intermediate marker.
    private static func checkMarkers(_ chain: [Certificate], version: UInt8) throws(LegacyReceiptError) {
        guard let anchor = chain.last, AppleCertificates.isAppleRoot(anchor) else { return }
        guard let markers = Markers.required(forVersion: version) else {
            throw LegacyReceiptError(
                .invalidCertificatePurpose, "a version \(version) receipt has no Apple markers to check")
        }
        if let violation = AppleCertificates.markerViolation(
            in: chain, leafMarker: markers.leaf, intermediateMarker: markers.intermediate)
        {
            throw LegacyReceiptError(.invalidCertificatePurpose, "version \(version) receipt: \(violation)")
        }
    }
}
