import ReceiptCrypto
import ReceiptModel
import StrictJSON

/// A JWS that passed every check, with the evidence, and typed readings of its payload.
public struct VerifiedJWS: Sendable {
    /// The protected header, as signed.
    public let header: JSONObject
    /// The payload, as signed: member order and number text kept.
    public let payload: JSONObject
    /// The payload's exact octets (the JSON text that was signed).
    public let payloadBytes: [UInt8]
    /// The compact serialization verified, exactly as given.
    public let compact: [UInt8]
    /// The header's `kid`, when present (Xcode writes `Apple_Xcode_Key`).
    public let keyID: String?
    /// The validated chain: leaf first, pinned anchor last.
    public let chain: [Certificate]
    /// The instant at which the certificates were checked.
    public let validationTime: ReceiptDate

    /// The payload as a signed transaction (`JWSTransactionDecodedPayload`), checked against `expectations`.
    public func transaction(expecting expectations: JWSExpectations = JWSExpectations()) throws(JWSError)
        -> SignedTransaction
    {
        let transaction = try SignedTransaction(json: payload)
        try transaction.check(expectations)
        return transaction
    }

    /// The payload as renewal info (`JWSRenewalInfoDecodedPayload`), checked against `expectations`.
    public func renewalInfo(expecting expectations: JWSExpectations = JWSExpectations()) throws(JWSError)
        -> SignedRenewalInfo
    {
        let renewalInfo = try SignedRenewalInfo(json: payload)
        try renewalInfo.check(expectations)
        return renewalInfo
    }

    /// The payload as an app transaction (`AppTransaction`), checked against `expectations`.
    public func appTransaction(expecting expectations: JWSExpectations = JWSExpectations()) throws(JWSError)
        -> SignedAppTransaction
    {
        let appTransaction = try SignedAppTransaction(json: payload)
        try appTransaction.check(expectations)
        return appTransaction
    }
}
