/// One attribute of a receipt payload, as encoded:
/// `ReceiptAttribute ::= SEQUENCE { type INTEGER, version INTEGER, value OCTET STRING }`.
/// Undocumented attributes are kept in this raw form.
public struct ReceiptAttribute: Hashable, Sendable {
    public let type: Int64
    public let version: Int64
    public let value: [UInt8]

    public init(type: Int64, version: Int64, value: [UInt8]) {
        self.type = type
        self.version = version
        self.value = value
    }
}

/// The content of an app receipt: the documented fields, typed, and every other attribute kept raw.
public struct Receipt: Hashable, Sendable {
    /// Field 0: `Production`, `ProductionSandbox`, `Xcode`…
    public var receiptType: String?
    /// Field 1: the app's App Store identifier (0 outside production).
    public var appItemID: Int64?
    /// Field 2.
    public var bundleID: String
    /// Field 3: `CFBundleVersion` (iOS) or `CFBundleShortVersionString` (macOS).
    public var applicationVersion: String?
    /// Field 4: the opaque value hashed into the device binding.
    public var opaqueValue: [UInt8]?
    /// Field 5: SHA-1 of device identifier ‖ opaque value ‖ bundle id value octets.
    public var sha1Hash: [UInt8]?
    /// Field 12.
    public var creationDate: ReceiptDate
    /// Field 15 (undocumented; `download_id` in Apple's verifyReceipt answer), when it holds an INTEGER.
    public var downloadID: Int64?
    /// Field 16.
    public var versionExternalIdentifier: Int64?
    /// Field 17, in payload order.
    public var inAppPurchases: [InAppPurchase]
    /// Field 18.
    public var originalPurchaseDate: ReceiptDate?
    /// Field 19.
    public var originalApplicationVersion: String?
    /// Field 21.
    public var expirationDate: ReceiptDate?
    /// Every attribute not read into a field above, in payload order: types without a field, and undocumented
    /// fields of another shape than real receipts give them (or seen again).
    public var unknownAttributes: [ReceiptAttribute] {
        get { rawAttributes.attributes }
        set { rawAttributes = RawAttributes(newValue) }
    }
    /// ``unknownAttributes`` as they are held.
    var rawAttributes: RawAttributes

    public init(
        bundleID: String,
        creationDate: ReceiptDate,
        receiptType: String? = nil,
        appItemID: Int64? = nil,
        applicationVersion: String? = nil,
        originalApplicationVersion: String? = nil,
        originalPurchaseDate: ReceiptDate? = nil,
        expirationDate: ReceiptDate? = nil,
        versionExternalIdentifier: Int64? = nil,
        downloadID: Int64? = nil,
        opaqueValue: [UInt8]? = nil,
        sha1Hash: [UInt8]? = nil,
        inAppPurchases: [InAppPurchase] = [],
        unknownAttributes: [ReceiptAttribute] = []
    ) {
        self.init(
            bundleID: bundleID, creationDate: creationDate, receiptType: receiptType, appItemID: appItemID,
            applicationVersion: applicationVersion, originalApplicationVersion: originalApplicationVersion,
            originalPurchaseDate: originalPurchaseDate, expirationDate: expirationDate,
            versionExternalIdentifier: versionExternalIdentifier, downloadID: downloadID, opaqueValue: opaqueValue,
            sha1Hash: sha1Hash, inAppPurchases: inAppPurchases, rawAttributes: RawAttributes(unknownAttributes))
    }

    /// The receipt with its unknown attributes as they are held: what the payload decoder makes, setting each
    /// property once.
    init(
        bundleID: String, creationDate: ReceiptDate, receiptType: String?, appItemID: Int64?,
        applicationVersion: String?, originalApplicationVersion: String?, originalPurchaseDate: ReceiptDate?,
        expirationDate: ReceiptDate?, versionExternalIdentifier: Int64?, downloadID: Int64?, opaqueValue: [UInt8]?,
        sha1Hash: [UInt8]?, inAppPurchases: [InAppPurchase], rawAttributes: RawAttributes
    ) {
        self.bundleID = bundleID
        self.creationDate = creationDate
        self.receiptType = receiptType
        self.appItemID = appItemID
        self.applicationVersion = applicationVersion
        self.originalApplicationVersion = originalApplicationVersion
        self.originalPurchaseDate = originalPurchaseDate
        self.expirationDate = expirationDate
        self.versionExternalIdentifier = versionExternalIdentifier
        self.downloadID = downloadID
        self.opaqueValue = opaqueValue
        self.sha1Hash = sha1Hash
        self.inAppPurchases = inAppPurchases
        self.rawAttributes = rawAttributes
    }

    /// What field 5 is the SHA-1 of for `device`: its identifier bytes ‖ opaque value (field 4) ‖
    /// ``bundleIDValueOctets``; nil when the receipt has no opaque value.
    public func deviceBindingInput(for device: DeviceIdentifier) -> [UInt8]? {
        opaqueValue.map { device.bytes + $0 + bundleIDValueOctets }
    }
}

/// One in-app purchase (field 17 of the receipt; fields 1701-1721 inside it).
public struct InAppPurchase: Hashable, Sendable {
    /// Field 1701.
    public var quantity: Int64?
    /// Field 1702.
    public var productID: String
    /// Field 1703.
    public var transactionID: String
    /// Field 1704.
    public var purchaseDate: ReceiptDate
    /// Field 1705.
    public var originalTransactionID: String?
    /// Field 1706.
    public var originalPurchaseDate: ReceiptDate?
    /// Field 1707 (undocumented; not in Apple's JSON; kept for inspection), when it holds an INTEGER.
    public var productType: Int64?
    /// Field 1708: when an auto-renewable subscription period ends.
    public var expiresDate: ReceiptDate?
    /// Field 1711.
    public var webOrderLineItemID: Int64?
    /// Field 1712: set when Apple refunded the transaction.
    public var cancellationDate: ReceiptDate?
    /// Field 1713.
    public var isTrialPeriod: Bool?
    /// Field 1719.
    public var isInIntroOfferPeriod: Bool?
    /// Field 1721.
    public var promotionalOfferID: String?
    /// Every attribute of this purchase not read into a field above, in payload order (as for the receipt's).
    public var unknownAttributes: [ReceiptAttribute] {
        get { rawAttributes.attributes }
        set { rawAttributes = RawAttributes(newValue) }
    }
    /// ``unknownAttributes`` as they are held.
    var rawAttributes: RawAttributes

    public init(
        productID: String,
        transactionID: String,
        purchaseDate: ReceiptDate,
        quantity: Int64? = 1,
        originalTransactionID: String? = nil,
        originalPurchaseDate: ReceiptDate? = nil,
        productType: Int64? = nil,
        expiresDate: ReceiptDate? = nil,
        webOrderLineItemID: Int64? = nil,
        cancellationDate: ReceiptDate? = nil,
        isTrialPeriod: Bool? = nil,
        isInIntroOfferPeriod: Bool? = nil,
        promotionalOfferID: String? = nil,
        unknownAttributes: [ReceiptAttribute] = []
    ) {
        self.init(
            productID: productID, transactionID: transactionID, purchaseDate: purchaseDate, quantity: quantity,
            originalTransactionID: originalTransactionID, originalPurchaseDate: originalPurchaseDate,
            productType: productType, expiresDate: expiresDate, webOrderLineItemID: webOrderLineItemID,
            cancellationDate: cancellationDate, isTrialPeriod: isTrialPeriod,
            isInIntroOfferPeriod: isInIntroOfferPeriod, promotionalOfferID: promotionalOfferID,
            rawAttributes: RawAttributes(unknownAttributes))
    }

    /// The purchase with its unknown attributes as they are held: what the payload decoder makes, setting each
    /// property once.
    init(
        productID: String, transactionID: String, purchaseDate: ReceiptDate, quantity: Int64?,
        originalTransactionID: String?, originalPurchaseDate: ReceiptDate?, productType: Int64?,
        expiresDate: ReceiptDate?, webOrderLineItemID: Int64?, cancellationDate: ReceiptDate?, isTrialPeriod: Bool?,
        isInIntroOfferPeriod: Bool?, promotionalOfferID: String?, rawAttributes: RawAttributes
    ) {
        self.productID = productID
        self.transactionID = transactionID
        self.purchaseDate = purchaseDate
        self.quantity = quantity
        self.originalTransactionID = originalTransactionID
        self.originalPurchaseDate = originalPurchaseDate
        self.productType = productType
        self.expiresDate = expiresDate
        self.webOrderLineItemID = webOrderLineItemID
        self.cancellationDate = cancellationDate
        self.isTrialPeriod = isTrialPeriod
        self.isInIntroOfferPeriod = isInIntroOfferPeriod
        self.promotionalOfferID = promotionalOfferID
        self.rawAttributes = rawAttributes
    }
}
