/// Why signed data was not accepted (or could not be signed): a stable code to switch on, and a message that names
/// the part or field and the rule it broke.
public struct JWSError: Error, Hashable, Sendable, CustomStringConvertible {
    /// The closed set of failure codes. Their raw values are stable and may appear in JSON output.
    public enum Code: String, CaseIterable, Sendable {
        /// Not three non-empty dot-separated parts of strict base64url; a header or body that is not a JSON object;
        /// a header member of the wrong type.
        case malformed
        /// Larger than the configured limit.
        case tooLarge = "too_large"
        /// A header parameter this verifier does not understand (`crit`, `jku`, `jwk`, `x5u`, `b64`…), which it
        /// refuses rather than ignore.
        case unsupportedHeader = "unsupported_header"
        /// `alg` other than `ES256`, or a signing key that is not EC P-256.
        case unsupportedAlgorithm = "unsupported_algorithm"
        /// No `x5c` header, or one that is empty or longer than the limit.
        case missingCertificateChain = "missing_certificate_chain"
        /// An `x5c` entry that is not strict base64 of one DER certificate, or a certificate unusable in its place.
        case invalidCertificate = "invalid_certificate"
        /// The signature is not 64 bytes, or does not verify over `header.payload` with the leaf key.
        case invalidSignature = "invalid_signature"
        /// The chain does not end at a pinned anchor.
        case untrustedChain = "untrusted_chain"
        /// A certificate had expired at the validation time.
        case certificateExpired = "certificate_expired"
        /// A certificate was not yet valid at the validation time.
        case certificateNotYetValid = "certificate_not_yet_valid"
        /// Apple's marker extensions are missing where the marker policy requires them.
        case missingMarkerExtension = "missing_marker_extension"
        /// The payload has no `signedDate` (nor, for an app transaction, `receiptCreationDate`) and no validation time
        /// was given.
        case missingSignedDate = "missing_signed_date"
        /// The payload is not a JSON object, or a documented field has the wrong JSON type or an impossible value.
        case invalidPayload = "invalid_payload"
        /// The bundle id differs from the one the caller expects.
        case wrongBundleID = "wrong_bundle_id"
        /// The environment differs from the one the caller expects.
        case wrongEnvironment = "wrong_environment"
        /// The app's Apple id differs from the one the caller expects.
        case wrongAppAppleID = "wrong_app_apple_id"
        /// Signing failed: a key that is not P-256, a key that does not match the leaf, a broken chain.
        case signingFailed = "signing_failed"
    }

    public let code: Code
    public let message: String

    public init(_ code: Code, _ message: String) {
        self.code = code
        self.message = message
    }

    public var description: String { "\(code.rawValue): \(message)" }
}
