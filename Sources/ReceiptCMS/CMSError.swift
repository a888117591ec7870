import ReceiptDER

/// Why bytes are not a CMS SignedData this module can read: which part, and what rule.
public struct CMSError: Error, Hashable, Sendable, CustomStringConvertible {
    public enum Reason: Hashable, Sendable {
        /// The encoding breaks BER (or DER where DER is required).
        case malformed(DERError)
        /// The ContentInfo holds something other than SignedData.
        case notSignedData(ASN1ObjectIdentifier)
        /// A structural rule of RFC 5652 that the encoding obeys but the content breaks.
        case invalid(String)
        /// Valid CMS that this reader does not read (it says what).
        case unsupported(String)
    }

    public let reason: Reason
    /// The part of the structure, e.g. `SignedData.signerInfos[0].signedAttrs`.
    public let location: String

    public init(_ reason: Reason, at location: String) {
        self.reason = reason
        self.location = location
    }

    public var description: String {
        switch reason {
        case .malformed(let error): "\(location): \(error)"
        case .notSignedData(let type): "\(location): content type is \(type), not signedData (1.2.840.113549.1.7.2)"
        case .invalid(let rule): "\(location): \(rule)"
        case .unsupported(let what): "\(location): \(what) is not supported"
        }
    }
}
