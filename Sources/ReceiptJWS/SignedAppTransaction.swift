import ReceiptModel
import StrictJSON

/// The payload of a signed app transaction (StoreKit's `AppTransaction`): the documented fields typed (all
/// optional, as Apple documents them), every other member kept.
public struct SignedAppTransaction: Hashable, Sendable {
    /// `receiptType`: the environment, `Production`, `Sandbox`, `Xcode`…
    public var receiptType: String?
    /// `appAppleId` (absent outside production).
    public var appAppleID: Int64?
    /// `bundleId`.
    public var bundleID: String?
    /// `applicationVersion`.
    public var applicationVersion: String?
    /// `versionExternalIdentifier`.
    public var versionExternalIdentifier: Int64?
    /// `receiptCreationDate`: when the App Store signed the app transaction (StoreKit calls it `signedDate`).
    public var receiptCreationDate: ReceiptDate?
    /// `originalPurchaseDate`.
    public var originalPurchaseDate: ReceiptDate?
    /// `originalApplicationVersion`.
    public var originalApplicationVersion: String?
    /// `deviceVerification`: base64 of the device binding hash.
    public var deviceVerification: String?
    /// `deviceVerificationNonce`: the UUID hashed into `deviceVerification`.
    public var deviceVerificationNonce: String?
    /// `preorderDate`.
    public var preorderDate: ReceiptDate?
    /// `appTransactionId`.
    public var appTransactionID: String?
    /// `originalPlatform`: `iOS`, `macOS`, `tvOS`, `visionOS`.
    public var originalPlatform: String?
    /// `signedDate`, when the payload carries one besides `receiptCreationDate`.
    public var signedDate: ReceiptDate?
    /// The whole payload as signed, in payload order.
    public var json: JSONObject
    /// The members this type does not type, in payload order.
    public var unknownFields: JSONObject

    /// The JSON keys this type reads.
    public static let knownKeys: Set<String> = [
        "receiptType", "appAppleId", "bundleId", "applicationVersion", "versionExternalIdentifier",
        "receiptCreationDate", "originalPurchaseDate", "originalApplicationVersion", "deviceVerification",
        "deviceVerificationNonce", "preorderDate", "appTransactionId", "originalPlatform", "signedDate",
    ]

    /// Reads a payload; `path` names it in error messages.
    public init(json: JSONObject, path: String = "payload") throws(JWSError) {
        let fields = PayloadFields(json, path: path)
        receiptType = try fields.string("receiptType")
        appAppleID = try fields.integer("appAppleId")
        bundleID = try fields.string("bundleId")
        applicationVersion = try fields.string("applicationVersion")
        versionExternalIdentifier = try fields.integer("versionExternalIdentifier")
        receiptCreationDate = try fields.date("receiptCreationDate")
        originalPurchaseDate = try fields.date("originalPurchaseDate")
        originalApplicationVersion = try fields.string("originalApplicationVersion")
        deviceVerification = try fields.string("deviceVerification")
        deviceVerificationNonce = try fields.string("deviceVerificationNonce")
        preorderDate = try fields.date("preorderDate")
        appTransactionID = try fields.string("appTransactionId")
        originalPlatform = try fields.string("originalPlatform")
        signedDate = try fields.date("signedDate")
        self.json = json
        unknownFields = fields.unknownMembers(known: Self.knownKeys)
    }

    /// Applies the caller's bundle id, environment (`receiptType`) and app Apple id checks.
    func check(_ expectations: JWSExpectations, path: String = "payload") throws(JWSError) {
        try expectations.checkBundleID(bundleID, field: "\(path).bundleId")
        try expectations.checkEnvironment(receiptType, field: "\(path).receiptType")
        try expectations.checkAppAppleID(appAppleID, environment: receiptType, field: "\(path).appAppleId")
    }
}
