import LegacyReceipt
import ReceiptDER
import ReceiptJWS
import ReceiptVerifier
import StrictJSON

/// The kinds of purchase proof a backend receives.
public enum PurchaseProofFormat: String, Sendable {
    /// An app receipt: a CMS SignedData over a DER payload (DER or base64).
    case appReceipt = "app_receipt"
    /// StoreKit 2 signed data: a JWS compact serialization (a transaction, renewal info or app transaction).
    case signedData = "jws"
    /// An App Store Server Notification V2 body: `{"signedPayload": JWS}`.
    case serverNotification = "server_notification"
    /// An iOS 6 per-transaction receipt: a NeXTSTEP plist (base64 or as text).
    case legacyTransactionReceipt = "legacy_transaction_receipt"
    /// Data that is recognisably none of the above: JSON that is not a notification body, a PEM block.
    case unrecognized

    /// Which format `input` is in, judged by what it is or decodes to, never by how its text happens to start:
    /// text with the two dots of a JWS is signed data; a JSON document is a notification body when it has a
    /// `signedPayload` (and no proof otherwise); a property list, or base64 that decodes to one, is an iOS 6
    /// receipt; DER, or base64 of anything else, is taken for an app receipt (whose verifier tells a certificate
    /// from a receipt). Only verification decides whether it is a valid one.
    public static func detect(_ input: [UInt8]) -> PurchaseProofFormat {
        let text = input.drop(while: isWhitespace)
        guard let first = text.first else { return .appReceipt }
        if first == 0x30 { return .appReceipt }
        if first == UInt8(ascii: "{") || first == UInt8(ascii: "[") || first == UInt8(ascii: "\"") {
            guard let json = try? JSONValue(parsing: text) else {
                return first == UInt8(ascii: "{") ? .legacyTransactionReceipt : .unrecognized
            }
            return json["signedPayload"] != nil ? .serverNotification : .unrecognized
        }
        if text.starts(with: Array("-----BEGIN".utf8)) { return .unrecognized }
        // Standard base64 has no dots; a JWS compact serialization has exactly two.
        if text.filter({ $0 == UInt8(ascii: ".") }).count == 2 { return .signedData }
        let decoded = decodedStart(of: text).drop(while: isWhitespace)
        switch decoded.first {
        case UInt8(ascii: "{"): return .legacyTransactionReceipt
        default: return .appReceipt
        }
    }

    /// What `input` looks like when ``detect(_:)`` finds it is no purchase proof, for an error message.
    public static func describeUnrecognized(_ input: [UInt8]) -> String {
        let text = input.drop(while: isWhitespace)
        if text.starts(with: Array("-----BEGIN CERTIFICATE-----".utf8)) {
            return "this is a PEM certificate, not a purchase proof (a certificate to trust is a trust anchor, --trust)"
        }
        if text.starts(with: Array("-----BEGIN".utf8)) {
            let label = String(decoding: text.prefix(64).prefix { $0 != 0x0A && $0 != 0x0D }, as: UTF8.self)
            return "this is a PEM block (\(label)), not a purchase proof"
        }
        let shape: String
        switch try? JSONValue(parsing: text) {
        case .object(let object)?:
            let keys = object.keys.prefix(8).joined(separator: ", ")
            shape = object.keys.isEmpty ? "an empty JSON object" : "a JSON object with keys \(keys)"
        case let value?: shape = "JSON (\(value.kindName))"
        case nil: shape = "JSON that does not parse"
        }
        return "this is \(shape): neither StoreKit 2 signed data (a JWS, eyJ….….…) nor an App Store Server "
            + "Notification body ({\"signedPayload\": …})"
    }

    private static func isWhitespace(_ byte: UInt8) -> Bool {
        byte == 0x20 || byte == 0x0A || byte == 0x0D || byte == 0x09
    }

    /// The bytes the first (up to) 64 base64 characters of `text` decode to; empty when they are not base64.
    private static func decodedStart(of text: ArraySlice<UInt8>) -> [UInt8] {
        var characters: [UInt8] = []
        for byte in text where !isWhitespace(byte) {
            guard characters.count < 64 else { break }
            characters.append(byte)
        }
        characters.removeLast(characters.count % 4)
        return (try? Base64.decode(characters)) ?? []
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
    /// The input is recognisably no purchase proof (a certificate, JSON that is no notification body); the text
    /// says what it looks like.
    case unrecognized(String)
    /// The caller asked for a check that this format cannot make (a device binding on a JWS, say): refused
    /// rather than silently skipped.
    case uncheckableOption(PurchaseProofFormat, option: String)

    /// The stable snake_case code of the underlying error.
    public var code: String {
        switch self {
        case .appReceipt(let error): error.code.rawValue
        case .signedData(let error): error.code.rawValue
        case .legacyTransactionReceipt(let error): error.code.rawValue
        case .unrecognized: "not_a_purchase_proof"
        case .uncheckableOption: "uncheckable_option"
        }
    }

    /// What is wrong, naming the field and the rule.
    public var message: String {
        switch self {
        case .appReceipt(let error): error.message
        case .signedData(let error): error.message
        case .legacyTransactionReceipt(let error): error.message
        case .unrecognized(let description): description
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
        case .unrecognized: return 21002
        case .uncheckableOption: return 21003
        }
    }

    public var description: String { "\(code): \(message)" }
}
