/// Why a receipt was not accepted: a stable code to switch on, and a message that names the field and the rule.
public struct ReceiptVerificationError: Error, Hashable, Sendable, CustomStringConvertible {
    /// The closed set of failure codes. Their raw values are stable and appear in JSON output.
    public enum Code: String, CaseIterable, Sendable {
        /// Not DER, not strict base64, not a CMS SignedData, or bytes after the ContentInfo.
        case malformed
        /// Larger than a configured limit (input size, nesting depth, number of purchases, inflated size or ratio).
        case tooLarge = "too_large"
        /// An iOS 6 per-transaction receipt (an ASCII property list), not an app receipt.
        case legacyTransactionReceipt = "legacy_transaction_receipt"
        /// Not exactly one SignerInfo.
        case wrongSignerCount = "wrong_signer_count"
        /// The signed content is detached (no eContent).
        case missingContent = "missing_content"
        /// The signed content is neither `data` (1.2.840.113549.1.7.1) nor CompressedData holding `data`.
        case wrongContentType = "wrong_content_type"
        /// A digest or signature algorithm other than SHA-1/SHA-256 with RSA (PKCS#1 v1.5) or ECDSA.
        case unsupportedAlgorithm = "unsupported_algorithm"
        /// Signed attributes whose content-type attribute is missing or differs from the content's type.
        case invalidSignedAttributes = "invalid_signed_attributes"
        /// No embedded certificate matches the SignerInfo's issuer and serial number (or key identifier).
        case signerCertificateMissing = "signer_certificate_missing"
        /// The signature (or the messageDigest attribute) does not match the signed bytes.
        case invalidSignature = "invalid_signature"
        /// The payload is not a strict DER `SET OF ReceiptAttribute`.
        case unreadablePayload = "unreadable_payload"
        /// A field that may appear once appears more than once.
        case duplicateAttribute = "duplicate_attribute"
        /// A required field (bundle id, creation date; product id, transaction id, purchase date) is absent.
        case missingField = "missing_field"
        /// A documented field with the wrong inner type, invalid UTF-8, an impossible date or trailing bytes.
        case invalidField = "invalid_field"
        /// The chain does not end at a pinned trust anchor.
        case untrustedChain = "untrusted_chain"
        /// A certificate is unusable in its place (undecodable, bad signature, issuer that is not a CA…).
        case invalidCertificate = "invalid_certificate"
        /// A certificate is not meant for receipt signing (key usage, Apple's marker extensions).
        case invalidCertificatePurpose = "invalid_certificate_purpose"
        /// A certificate had expired at the validation time.
        case certificateExpired = "certificate_expired"
        /// A certificate was not yet valid at the validation time.
        case certificateNotYetValid = "certificate_not_yet_valid"
        /// The bundle id differs from the one the caller expects.
        case wrongBundleID = "wrong_bundle_id"
        /// The application version differs from the one the caller expects.
        case wrongAppVersion = "wrong_app_version"
        /// The receipt is not bound to the device the caller names.
        case deviceHashMismatch = "device_hash_mismatch"
    }

    public let code: Code
    public let message: String
    /// Set when our envelope reader refused a shape that is valid CMS but not one it reads; the verifier then
    /// lets OpenSSL's CMS parser read it.
    let isUnsupportedShape: Bool

    public init(_ code: Code, _ message: String) {
        self.init(code, message, unsupportedShape: false)
    }

    init(_ code: Code, _ message: String, unsupportedShape: Bool) {
        self.code = code
        self.message = message
        self.isUnsupportedShape = unsupportedShape
    }

    /// The status Apple's verifyReceipt would answer: 21002 when the data cannot be read as a receipt, 21003 when
    /// it was read but could not be authenticated (or is not for this app or device).
    public var status: Int {
        switch code {
        case .malformed, .tooLarge, .legacyTransactionReceipt, .wrongSignerCount, .missingContent, .wrongContentType,
            .unreadablePayload, .duplicateAttribute, .missingField, .invalidField:
            21002
        case .unsupportedAlgorithm, .invalidSignedAttributes, .signerCertificateMissing, .invalidSignature,
            .untrustedChain, .invalidCertificate, .invalidCertificatePurpose, .certificateExpired,
            .certificateNotYetValid, .wrongBundleID, .wrongAppVersion, .deviceHashMismatch:
            21003
        }
    }

    public var description: String { "\(code.rawValue): \(message)" }
}
