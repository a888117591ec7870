/// The attribute types of an app receipt's payload that are read into typed fields, with the key verifyReceipt
/// uses for each: the ones Apple documents, and the undocumented ones real receipts carry in a known shape.
public enum ReceiptField: Int64, CaseIterable, Sendable {
    case receiptType = 0
    case appItemID = 1
    case bundleID = 2
    case applicationVersion = 3
    case opaqueValue = 4
    case sha1Hash = 5
    case creationDate = 12
    /// Undocumented: an INTEGER in real receipts; Apple's verifyReceipt answer shows it as `download_id`.
    case downloadID = 15
    case versionExternalIdentifier = 16
    case inAppPurchase = 17
    case originalPurchaseDate = 18
    case originalApplicationVersion = 19
    case expirationDate = 21

    /// The verifyReceipt JSON key (or, for the two binding fields, the name Apple's documentation uses).
    public var name: String {
        switch self {
        case .receiptType: "receipt_type"
        case .appItemID: "app_item_id"
        case .bundleID: "bundle_id"
        case .applicationVersion: "application_version"
        case .opaqueValue: "opaque_value"
        case .sha1Hash: "sha1_hash"
        case .creationDate: "receipt_creation_date"
        case .downloadID: "download_id"
        case .versionExternalIdentifier: "version_external_identifier"
        case .inAppPurchase: "in_app"
        case .originalPurchaseDate: "original_purchase_date"
        case .originalApplicationVersion: "original_application_version"
        case .expirationDate: "expiration_date"
        }
    }

    /// How the value octets must be encoded.
    var valueKind: ValueKind {
        switch self {
        case .receiptType, .bundleID, .applicationVersion, .originalApplicationVersion: .utf8String
        case .appItemID, .downloadID, .versionExternalIdentifier: .integer
        case .opaqueValue: .octets
        case .sha1Hash: .sha1Digest
        case .creationDate, .originalPurchaseDate, .expirationDate: .date
        case .inAppPurchase: .purchase
        }
    }

    /// Whether Apple documents the field, so that a value of another shape is an invalid receipt. An undocumented
    /// field is read only when it has the shape real receipts give it (and only its first occurrence); otherwise
    /// it is kept raw among the unknown attributes, never rejected.
    public var isDocumented: Bool { self != .downloadID }
}

/// The attribute types of one in-app purchase (the value of field 17) that are read into typed fields: the ones
/// Apple documents, and the undocumented ones real receipts carry in a known shape.
public enum InAppPurchaseField: Int64, CaseIterable, Sendable {
    case quantity = 1701
    case productID = 1702
    case transactionID = 1703
    case purchaseDate = 1704
    case originalTransactionID = 1705
    case originalPurchaseDate = 1706
    /// Undocumented: an INTEGER in real receipts (3 for auto-renewable subscriptions).
    case productType = 1707
    case expiresDate = 1708
    case webOrderLineItemID = 1711
    case cancellationDate = 1712
    case isTrialPeriod = 1713
    case isInIntroOfferPeriod = 1719
    case promotionalOfferID = 1721

    /// The verifyReceipt JSON key.
    public var name: String {
        switch self {
        case .quantity: "quantity"
        case .productID: "product_id"
        case .transactionID: "transaction_id"
        case .purchaseDate: "purchase_date"
        case .originalTransactionID: "original_transaction_id"
        case .originalPurchaseDate: "original_purchase_date"
        case .productType: "product_type"
        case .expiresDate: "expires_date"
        case .webOrderLineItemID: "web_order_line_item_id"
        case .cancellationDate: "cancellation_date"
        case .isTrialPeriod: "is_trial_period"
        case .isInIntroOfferPeriod: "is_in_intro_offer_period"
        case .promotionalOfferID: "promotional_offer_id"
        }
    }

    var valueKind: ValueKind {
        switch self {
        case .productID, .transactionID, .originalTransactionID, .promotionalOfferID: .utf8String
        case .quantity: .nonNegativeInteger
        case .productType, .webOrderLineItemID: .integer
        case .purchaseDate, .originalPurchaseDate, .expiresDate, .cancellationDate: .date
        case .isTrialPeriod, .isInIntroOfferPeriod: .flag
        }
    }

    /// Whether Apple documents the field (see ``ReceiptField/isDocumented``).
    public var isDocumented: Bool { self != .productType }
}

/// The encodings the value octets of a documented field can have.
enum ValueKind {
    /// A DER UTF8String.
    case utf8String
    /// A DER INTEGER that fits in 64 bits.
    case integer
    /// A DER INTEGER from 0 to 2^63-1.
    case nonNegativeInteger
    /// A DER INTEGER, 0 or 1.
    case flag
    /// A DER IA5String holding an RFC 3339 date, or empty for "no date".
    case date
    /// Raw octets, not DER.
    case octets
    /// Exactly 20 raw octets.
    case sha1Digest
    /// A DER SET OF ReceiptAttribute: one in-app purchase.
    case purchase
}
