import HTTPServer
import ReceiptDER
import ReceiptLedger
import ReceiptModel

/// `GET /v1/customers/{customer_id}/receipt?bundle_id=…[&application_version=…]`: "restore purchases". A receipt
/// signed now with every transaction the ledger holds for the customer and app (refunds included, as
/// cancellation dates), in purchase order. DER (`application/pkcs7-mime`), or base64 text with
/// `Accept: text/plain`.
extension ReceiptService {
    func customerReceipt(_ request: HTTPRequest, customerID: String) throws(ServiceError) -> HTTPResponse {
        guard let bundleID = request.queryValue("bundle_id"), !bundleID.isEmpty else {
            throw .badRequest("the query argument bundle_id is required")
        }
        let applicationVersion = request.queryValue("application_version")
        for (name, value) in [("bundle_id", bundleID), ("application_version", applicationVersion ?? "")]
        where value.utf8.count > Self.maximumIdentifierLength {
            throw .badRequest("the query argument \(name) must be at most \(Self.maximumIdentifierLength) bytes")
        }
        guard configuration.signer != nil else {
            throw ServiceError(
                status: 501, code: "issuing_disabled", message: "this service has no signing key configured")
        }
        let transactions = try ledgerOperation { () throws(LedgerError) in
            try ledger.transactions(customerID: customerID, bundleID: bundleID)
        }
        let receipt = Receipt(
            bundleID: bundleID, creationDate: clock(), receiptType: configuration.environment.receiptType,
            applicationVersion: applicationVersion, inAppPurchases: transactions.map(\.purchase))
        let signed = try issue(receipt)
        if request.header("accept")?.contains("text/plain") == true {
            return HTTPResponse(
                status: 200, headers: [("Content-Type", "text/plain")], body: Array(Base64.encode(signed).utf8))
        }
        return HTTPResponse(status: 200, headers: [("Content-Type", "application/pkcs7-mime")], body: signed)
    }
}

extension ReceiptService {
    /// `receipt` signed, or the copy signed earlier for the same content (see ``SignedReceiptCache``), dated now
    /// when it is new. Never issues what this service would refuse: more purchases than `limits.max_purchases`
    /// (422 `too_many_purchases`), or more bytes than `limits.max_receipt_bytes` (422 `receipt_too_large`).
    func issue(_ receipt: Receipt) throws(ServiceError) -> [UInt8] {
        guard let signer = configuration.signer else {
            throw ServiceError(
                status: 501, code: "issuing_disabled", message: "this service has no signing key configured")
        }
        let limits = configuration.verificationLimits
        guard receipt.inAppPurchases.count <= limits.maximumPurchases else {
            throw ServiceError(
                status: 422, code: "too_many_purchases",
                message: "the receipt would hold \(receipt.inAppPurchases.count) purchases; this service accepts at "
                    + "most \(limits.maximumPurchases) (limits.max_purchases), so it does not issue it")
        }
        let key = SignedReceiptCache.key(receipt)
        if let cached = signedReceipts.receipt(for: key) { return cached }
        var dated = receipt
        dated.creationDate = clock()
        let signed: [UInt8]
        do {
            signed = try signer.sign(dated)
        } catch {
            throw ServiceError(status: 500, code: "signing_failed", message: "\(error)")
        }
        guard signed.count <= limits.maximumInputSize else {
            throw ServiceError(
                status: 422, code: "receipt_too_large",
                message: "the receipt would be \(signed.count) bytes; this service accepts at most "
                    + "\(limits.maximumInputSize) (limits.max_receipt_bytes), so it does not issue it")
        }
        signedReceipts.keep(signed, for: key)
        return signed
    }
}
