import LegacyReceipt
import ReceiptJWS
import ReceiptVerifier
import StrictJSON

/// The kinds of purchase proof a backend receives.
public enum PurchaseProofFormat: String, CaseIterable, Sendable {
    /// An app receipt: a CMS SignedData over a DER payload (DER or base64).
    case appReceipt = "app_receipt"
    /// StoreKit 2 signed data: a JWS compact serialization (a transaction, renewal info or app transaction).
    case signedData = "jws"
    /// An App Store Server Notification V2 body: `{"signedPayload": JWS}`.
    case serverNotification = "server_notification"
    /// An iOS 6 per-transaction receipt: a NeXTSTEP plist (base64 or as text).
    case legacyTransactionReceipt = "legacy_transaction_receipt"

    /// Which format `input` is in, judged from its first bytes (and for JSON, whether it has a `signedPayload`);
    /// only verification decides whether it is a valid one.
    public static func detect(_ input: [UInt8]) -> PurchaseProofFormat {
        let text = input.drop { $0 == 0x20 || $0 == 0x0A || $0 == 0x0D || $0 == 0x09 }
        guard let first = text.first else { return .appReceipt }
        switch first {
        case 0x30: return .appReceipt
        case UInt8(ascii: "{"):
            if case .object(let object)? = try? JSONValue(parsing: text), object["signedPayload"] != nil {
                return .serverNotification
            }
            return .legacyTransactionReceipt
        default: break
        }
        // Base64 of a DER SEQUENCE starts "MI" or "MC"; of a plist's "{", "ew"; a JWS header's `{"`, "eyJ".
        if text.starts(with: Array("eyJ".utf8)), text.filter({ $0 == UInt8(ascii: ".") }).count == 2 {
            return .signedData
        }
        if text.starts(with: Array("ew".utf8)) { return .legacyTransactionReceipt }
        return .appReceipt
    }
}

/// What a StoreKit 2 JWS carries, judged from its payload's keys.
public enum SignedDataKind: String, Sendable {
    case transaction
    case renewalInfo = "renewal_info"
    case appTransaction = "app_transaction"
    /// The `signedPayload` of a server notification.
    case notification
    /// A payload of none of the kinds above (Apple's own test data carries only a few fields).
    case other

    /// The kind of `payload`: a notification has a `notificationType`; a transaction a `transactionId`; renewal
    /// info `autoRenewStatus` or `autoRenewProductId`; an app transaction `receiptType` or `applicationVersion`.
    public static func of(_ payload: JSONObject) -> SignedDataKind {
        if payload["notificationType"] != nil { return .notification }
        if payload["transactionId"] != nil { return .transaction }
        if payload["autoRenewStatus"] != nil || payload["autoRenewProductId"] != nil { return .renewalInfo }
        if payload["receiptType"] != nil || payload["applicationVersion"] != nil { return .appTransaction }
        return .other
    }
}

/// A purchase proof that verified, in its own format's terms.
public enum VerifiedPurchaseProof: Sendable {
    case appReceipt(VerifiedReceipt)
    case signedTransaction(SignedTransaction, VerifiedJWS)
    case signedRenewalInfo(SignedRenewalInfo, VerifiedJWS)
    case signedAppTransaction(SignedAppTransaction, VerifiedJWS)
    /// Signed data with a trusted signature whose payload is of no known kind; its fields are as signed.
    case otherSignedData(VerifiedJWS)
    case serverNotification(VerifiedNotification)
    case legacyTransactionReceipt(VerifiedLegacyReceipt)

    public var format: PurchaseProofFormat {
        switch self {
        case .appReceipt: .appReceipt
        case .signedTransaction, .signedRenewalInfo, .signedAppTransaction, .otherSignedData: .signedData
        case .serverNotification: .serverNotification
        case .legacyTransactionReceipt: .legacyTransactionReceipt
        }
    }
}

/// Why a purchase proof did not verify, with its format's own error to switch on.
public enum PurchaseProofError: Error, Sendable, CustomStringConvertible {
    case appReceipt(ReceiptVerificationError)
    case signedData(JWSError)
    case legacyTransactionReceipt(LegacyReceiptError)
    /// The caller asked for a check that this format cannot make (a device binding on a JWS, say): refused
    /// rather than silently skipped.
    case uncheckableOption(PurchaseProofFormat, option: String)

    /// The stable snake_case code of the underlying error.
    public var code: String {
        switch self {
        case .appReceipt(let error): error.code.rawValue
        case .signedData(let error): error.code.rawValue
        case .legacyTransactionReceipt(let error): error.code.rawValue
        case .uncheckableOption: "uncheckable_option"
        }
    }

    /// What is wrong, naming the field and the rule.
    public var message: String {
        switch self {
        case .appReceipt(let error): error.message
        case .signedData(let error): error.message
        case .legacyTransactionReceipt(let error): error.message
        case .uncheckableOption(let format, let option):
            "\(option) cannot be checked on \(format.rawValue) data, which carries no such field"
        }
    }

    /// The status verifyReceipt would answer: 21002 when the data cannot be read, 21003 when it could not be
    /// authenticated.
    public var status: Int {
        switch self {
        case .appReceipt(let error): return error.status
        case .signedData(let error):
            switch error.code {
            case .malformed, .tooLarge, .invalidPayload: return 21002
            default: return 21003
            }
        case .legacyTransactionReceipt(let error):
            switch error.code {
            case .malformed, .tooLarge, .missingField, .invalidField: return 21002
            default: return 21003
            }
        case .uncheckableOption: return 21003
        }
    }

    public var description: String { "\(code): \(message)" }
}
