import ReceiptDER

/// Why a receipt payload was rejected: which field, and which rule it broke.
public struct ReceiptPayloadError: Error, Hashable, Sendable, CustomStringConvertible {
    public enum Reason: Hashable, Sendable {
        /// The payload is not a strict DER `SET OF ReceiptAttribute`, or an attribute is not
        /// `SEQUENCE { INTEGER, INTEGER, OCTET STRING }`.
        case malformed(DERError)
        /// A field that may appear once appears again (whatever the values).
        case duplicateAttribute
        /// A field every receipt must have is absent.
        case missingAttribute
        /// The value octets do not hold what the field requires; the text says what was expected.
        case invalidValue(String)
        /// More purchases than the limit allows.
        case tooManyPurchases(limit: Int)
    }

    public let reason: Reason
    /// Where: `bundle_id (field 2)`, `in_app[3].product_id (field 1702)`, or nil for the payload as a whole.
    public let location: String?

    public init(_ reason: Reason, at location: String?) {
        self.reason = reason
        self.location = location
    }

    public var description: String {
        let place = location.map { "\($0): " } ?? "payload: "
        switch reason {
        case .malformed(let error): return place + "not strict DER: \(error)"
        case .duplicateAttribute: return place + "appears more than once; it may appear only once"
        case .missingAttribute: return place + "is required but absent"
        case .invalidValue(let rule): return place + rule
        case .tooManyPurchases(let limit): return place + "more than \(limit) in-app purchases"
        }
    }
}
