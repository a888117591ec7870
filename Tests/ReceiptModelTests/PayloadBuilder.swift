import ReceiptDER
import ReceiptModel

// Receipt payloads built by hand, independently of `Receipt.payloadDER`:
//     Payload ::= SET OF ReceiptAttribute
//     ReceiptAttribute ::= SEQUENCE { type INTEGER, version INTEGER, value OCTET STRING }
// Set elements stay in the order given, as Apple writes them (not sorted).

/// A DER element with any tag and raw content, for values of the wrong type.
func element(_ tag: ASN1Tag, _ content: [UInt8]) -> [UInt8] {
    var writer = DERWriter()
    writer.append(tag, content: content)
    return writer.bytes
}

func utf8String(_ text: String) -> [UInt8] { element(.utf8String, Array(text.utf8)) }

func ia5String(_ text: String) -> [UInt8] { element(.ia5String, Array(text.utf8)) }

func integer(_ value: Int64) -> [UInt8] {
    var writer = DERWriter()
    writer.appendInteger(value)
    return writer.bytes
}

/// One `ReceiptAttribute` with its value octets as given.
func attribute(type: Int64, version: Int64 = 1, _ value: [UInt8]) -> [UInt8] {
    var writer = DERWriter()
    writer.appendSequence { sequence in
        sequence.appendInteger(type)
        sequence.appendInteger(version)
        sequence.appendOctetString(value)
    }
    return writer.bytes
}

/// An app-level attribute (fields 0-21).
func attribute(_ field: ReceiptField, _ value: [UInt8]) -> [UInt8] {
    attribute(type: field.rawValue, value)
}

/// An attribute inside an in-app purchase (fields 1701-1721).
func purchaseAttribute(_ field: InAppPurchaseField, _ value: [UInt8]) -> [UInt8] {
    attribute(type: field.rawValue, value)
}

/// `SET OF` with the elements in the order given.
func setOf(_ elements: [[UInt8]]) -> [UInt8] {
    element(.set, Array(elements.joined()))
}

/// Field 17: one in-app purchase, itself a `SET OF ReceiptAttribute`.
func purchase(_ attributes: [[UInt8]]) -> [UInt8] {
    attribute(.inAppPurchase, setOf(attributes))
}

/// The fixed values the payload tests build on.
enum Sample {
    static let bundleID = "com.example.app"
    static let creationText = "2024-06-05T12:00:00Z"
    static let creationDate = ReceiptDate(millisecondsSince1970: 1_717_588_800_000)

    static let bundleIDAttribute = attribute(.bundleID, utf8String(bundleID))
    static let creationDateAttribute = attribute(.creationDate, ia5String(creationText))
    /// The two attributes every receipt needs.
    static let requiredAttributes = [bundleIDAttribute, creationDateAttribute]

    static let productID = "com.example.pro"
    static let transactionID = "2000000123357229"
    static let purchaseText = "2024-06-01T08:30:00Z"
    /// 2024-06-01T08:30:00Z.
    static let purchaseDate = ReceiptDate(millisecondsSince1970: 1_717_230_600_000)

    /// The three attributes every purchase needs.
    static let requiredPurchaseAttributes = [
        purchaseAttribute(.productID, utf8String(productID)),
        purchaseAttribute(.transactionID, utf8String(transactionID)),
        purchaseAttribute(.purchaseDate, ia5String(purchaseText)),
    ]

    static let minimalReceipt = Receipt(bundleID: bundleID, creationDate: creationDate)
    /// What `requiredPurchaseAttributes` decode to: no quantity field, so no quantity.
    static let minimalPurchase = InAppPurchase(
        productID: productID, transactionID: transactionID, purchaseDate: purchaseDate, quantity: nil)
}

/// Decodes a payload made of `attributes`.
func decodePayload(_ attributes: [[UInt8]], maximumPurchases: Int = .max) throws -> Receipt {
    try Receipt(payload: setOf(attributes)[...], maximumPurchases: maximumPurchases)
}

extension ReceiptPayloadError {
    /// The DER rule that was broken, when the reason is `.malformed`.
    var derReason: DERError.Reason? {
        if case .malformed(let error) = reason { return error.reason }
        return nil
    }

    var isInvalidValue: Bool {
        if case .invalidValue = reason { return true }
        return false
    }
}
