import PropertyList
import ReceiptDER

/// An iOS 6-era per-transaction receipt (`SKPaymentTransaction.transactionReceipt`), parsed but not verified.
///
/// The receipt is an old-style ASCII property list, usually sent base64-encoded:
///
///     {
///         "signature" = "<base64 of the signature blob>";
///         "purchase-info" = "<base64 of another property list, the signed purchase info>";
///         "environment" = "Sandbox";      (absent in production)
///         "pod" = "100";
///         "signing-status" = "0";
///     }
///
/// Every value is a string. Fields other than these are kept in ``fields``. Parsing checks syntax, the shape of the
/// signature blob and the types of documented purchase-info keys; it does no cryptography and trusts nothing. Use
/// ``LegacyReceiptVerifier`` to decide whether the purchase info is Apple's.
public struct LegacyTransactionReceipt: Hashable, Sendable {
    /// The default input size limit: real receipts are 3-5 KB.
    public static let defaultMaximumSize = 1 << 20
    /// A receipt is a dictionary of strings; nesting beyond this is refused as too deep before it is read.
    static let maximumDepth = 4

    /// The decoded `signature` field:
    ///
    ///     version (1 byte: 2 or 3)
    ///     ‖ RSA PKCS#1 v1.5 SHA-1 signature (128 bytes for version 2, 256 for version 3)
    ///     ‖ certificate length (4 bytes, big-endian)
    ///     ‖ leaf certificate (DER, exactly that length, nothing after it)
    ///
    /// The signature covers the version byte followed by the decoded purchase info.
    public struct Signature: Hashable, Sendable {
        /// 2 (RSA-1024 leaf issued by Apple iTunes Store Certification Authority) or 3 (RSA-2048 leaf issued by
        /// Apple Worldwide Developer Relations Certification Authority).
        public let version: UInt8
        /// The RSA signature.
        public let rsaSignature: [UInt8]
        /// The signer's certificate (DER), as carried in the blob; not decoded here.
        public let certificateDER: [UInt8]
        /// The whole decoded blob.
        public let blob: [UInt8]

        /// The RSA signature's length for a version: 128 for 2, 256 for 3, nil for versions that do not exist.
        public static func signatureLength(forVersion version: UInt8) -> Int? {
            switch version {
            case 2: 128
            case 3: 256
            default: nil
            }
        }

        /// Splits a decoded signature blob, checking that its lengths add up exactly.
        public init(blob: [UInt8]) throws(LegacyReceiptError) {
            guard let version = blob.first else { throw LegacyReceiptError(.malformed, "signature is empty") }
            guard let length = Self.signatureLength(forVersion: version) else {
                throw LegacyReceiptError(
                    .unsupportedVersion,
                    "signature version is \(version); only 2 (128-byte signature) and 3 (256-byte signature) exist")
            }
            let headerLength = 1 + length + 4
            guard blob.count >= headerLength else {
                throw LegacyReceiptError(
                    .malformed,
                    "signature is \(blob.count) bytes; version \(version) needs \(headerLength) before the certificate "
                        + "(version, \(length)-byte signature, 4-byte certificate length)")
            }
            let certificateLength = blob[(headerLength - 4)..<headerLength].reduce(0) { $0 << 8 | Int($1) }
            let present = blob.count - headerLength
            guard certificateLength == present else {
                throw LegacyReceiptError(
                    .malformed,
                    "signature claims a \(certificateLength)-byte certificate but \(present) bytes follow the length")
            }
            guard certificateLength > 0 else {
                throw LegacyReceiptError(.malformed, "signature carries an empty certificate")
            }
            self.version = version
            self.rsaSignature = Array(blob[1..<(1 + length)])
            self.certificateDER = Array(blob[headerLength...])
            self.blob = blob
        }
    }

    /// The decoded `signature` field; nil when the receipt has none (it cannot then be verified, but its purchase
    /// info can still be read, as Apple's libraries do to find the transaction id).
    public let signature: Signature?
    /// The decoded `purchase-info` field: the bytes that were signed after the version byte.
    public let purchaseInfoBytes: [UInt8]
    /// `purchase-info` read and typed.
    public let purchaseInfo: LegacyPurchaseInfo
    /// `environment`: "Sandbox" for sandbox purchases; absent in production. Not covered by the signature.
    public let environment: String?
    /// `pod`: the App Store server pod that signed. Not covered by the signature.
    public let pod: String?
    /// `signing-status`: "0" when signing succeeded. Not covered by the signature.
    public let signingStatus: String?
    /// Every top-level field as received, in order (all values are strings). Only `purchase-info` is signed: the
    /// other fields, `environment` included, can be changed by anyone without breaking the signature.
    public let fields: PropertyListDictionary

    /// The bytes the signature covers: the version byte followed by the decoded purchase info.
    public var signedData: [UInt8]? {
        signature.map { [$0.version] + purchaseInfoBytes }
    }

    /// Parses a receipt given as base64 text (how clients send `transactionReceipt`; spaces and line breaks are
    /// ignored) or, when its first byte other than whitespace is `{`, as the property-list text itself (what
    /// `transactionReceipt` holds on the device).
    ///
    /// - Parameter maximumSize: inputs longer than this are refused before anything is decoded; the same limit
    ///   applies to the decoded purchase info.
    public init(parsing input: [UInt8], maximumSize: Int = LegacyTransactionReceipt.defaultMaximumSize)
        throws(LegacyReceiptError)
    {
        guard input.count <= maximumSize else {
            throw LegacyReceiptError(
                .tooLarge, "the receipt is \(input.count) bytes, more than the limit of \(maximumSize)")
        }
        let isWhitespace: (UInt8) -> Bool = { $0 == 0x20 || $0 == 0x09 || $0 == 0x0A || $0 == 0x0D }
        let text: [UInt8]
        if input.first(where: { !isWhitespace($0) }) == UInt8(ascii: "{") {
            text = input
        } else {
            do {
                text = try Base64.decode(input)
            } catch {
                throw LegacyReceiptError(
                    .malformed, "the receipt is neither strict base64 nor a property list starting with '{': \(error)")
            }
        }
        let value = try Self.parsePropertyList(text, maximumSize: maximumSize, what: "the receipt")
        guard case .dictionary(let fields) = value else {
            throw LegacyReceiptError(.malformed, "the receipt is \(value.kindName), not a dictionary")
        }
        for entry in fields where entry.value.stringValue == nil {
            throw LegacyReceiptError(
                .invalidField, "receipt field \"\(entry.key)\" is \(entry.value.kindName); every field is a string")
        }
        guard let purchaseInfoText = fields["purchase-info"]?.stringValue else {
            throw LegacyReceiptError(.missingField, "the receipt has no \"purchase-info\"")
        }
        purchaseInfoBytes = try Self.base64Field("purchase-info", purchaseInfoText)
        purchaseInfo = try LegacyPurchaseInfo(propertyList: purchaseInfoBytes, maximumSize: maximumSize)
        if let signatureText = fields["signature"]?.stringValue {
            signature = try Signature(blob: Self.base64Field("signature", signatureText))
        } else {
            signature = nil
        }
        environment = fields["environment"]?.stringValue
        pod = fields["pod"]?.stringValue
        signingStatus = fields["signing-status"]?.stringValue
        self.fields = fields
    }

    private static func base64Field(_ name: String, _ text: String) throws(LegacyReceiptError) -> [UInt8] {
        do {
            return try Base64.decode(Array(text.utf8))
        } catch {
            throw LegacyReceiptError(.malformed, "\(name) is not strict base64: \(error)")
        }
    }

    /// Parses a receipt's property list (`what` names it in errors), as a dictionary of strings at most needs.
    static func parsePropertyList(_ bytes: [UInt8], maximumSize: Int, what: String) throws(LegacyReceiptError)
        -> PropertyListValue
    {
        do {
            return try PropertyListValue(parsing: bytes, maximumSize: maximumSize, maximumDepth: maximumDepth)
        } catch {
            let code: LegacyReceiptError.Code =
                switch error.rule {
                case .inputTooLarge, .nestingTooDeep: .tooLarge
                default: .malformed
                }
            throw LegacyReceiptError(code, "\(what): \(error)", syntaxError: error)
        }
    }
}
