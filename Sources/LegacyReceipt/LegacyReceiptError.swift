import PropertyList

/// Why a legacy transaction receipt was not accepted: a stable code to switch on, and a message that names the
/// field and the rule.
public struct LegacyReceiptError: Error, Hashable, Sendable, CustomStringConvertible {
    /// The closed set of failure codes. Their raw values are stable and may appear in JSON output.
    public enum Code: String, CaseIterable, Sendable {
        /// Not strict base64, not a property list this parser reads, a field that is not strict base64, or a
        /// signature blob whose lengths do not add up.
        case malformed
        /// Larger than the size limit, or nested deeper than a receipt can be.
        case tooLarge = "too_large"
        /// A required field is absent (`purchase-info`; for verification also `bid`, `product-id`,
        /// `transaction-id`, `quantity` and the purchase date).
        case missingField = "missing_field"
        /// A field with the wrong kind of value (not a string) or a value its type does not allow (a date that is
        /// not milliseconds, a quantity that is not a positive number…).
        case invalidField = "invalid_field"
        /// There is no `signature` field, so nothing vouches for the purchase info.
        case missingSignature = "missing_signature"
        /// The signature blob's version byte is neither 2 nor 3.
        case unsupportedVersion = "unsupported_version"
        /// `signing-status` is present and not "0".
        case signingStatus = "signing_status"
        /// The RSA-SHA1 signature does not verify over the version byte and the purchase info with the leaf's key.
        case invalidSignature = "invalid_signature"
        /// The leaf is not a certificate, or a certificate in the chain is unusable in its place.
        case invalidCertificate = "invalid_certificate"
        /// A certificate lacks Apple's marker extension for its place in a legacy receipt chain.
        case invalidCertificatePurpose = "invalid_certificate_purpose"
        /// The leaf does not chain to a pinned anchor through the supplied intermediates.
        case untrustedChain = "untrusted_chain"
        /// A certificate in the chain had expired at the validation time.
        case certificateExpired = "certificate_expired"
        /// A certificate in the chain was not yet valid at the validation time.
        case certificateNotYetValid = "certificate_not_yet_valid"
    }

    public let code: Code
    public let message: String
    /// The property-list syntax error behind a `malformed` or `tooLarge` code, with its byte offset.
    public let syntaxError: PropertyListError?

    public init(_ code: Code, _ message: String, syntaxError: PropertyListError? = nil) {
        self.code = code
        self.message = message
        self.syntaxError = syntaxError
    }

    public var description: String { "\(code.rawValue): \(message)" }
}
