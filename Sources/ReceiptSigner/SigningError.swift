/// Why a receipt could not be signed: a code to switch on and a message that says what to fix.
public struct SigningError: Error, Hashable, Sendable, CustomStringConvertible {
    public enum Code: String, CaseIterable, Sendable {
        /// The signing request (JSON) is not valid: syntax, a missing required field, a bad date or device id.
        case invalidRequest = "invalid_request"
        /// The certificate or chain cannot be used (undecodable, or the chain does not link up).
        case invalidCertificate = "invalid_certificate"
        /// The private key cannot be read, is encrypted, or is not RSA-2048+ / EC P-256.
        case invalidKey = "invalid_key"
        /// The private key does not belong to the signing certificate.
        case keyCertificateMismatch = "key_certificate_mismatch"
        /// OpenSSL failed to produce a signature or random bytes.
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
