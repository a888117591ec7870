import HTTPServer
import ReceiptDER
import ReceiptLedger
import ReceiptModel

/// `GET /v1/customers/{customer}/receipt?bundle_id=…[&application_version=…]`: "restore purchases". A receipt
/// signed now with every transaction the ledger holds for the customer and app (refunds included, as
/// cancellation dates), in purchase order. DER (`application/pkcs7-mime`), or base64 text with
/// `Accept: text/plain`.
extension ReceiptService {
    func customerReceipt(_ request: HTTPRequest, customerID: String) throws(ServiceError) -> HTTPResponse {
        guard let bundleID = request.queryValue("bundle_id"), !bundleID.isEmpty else {
            throw .badRequest("the query argument bundle_id is required")
        }
        guard let signer = configuration.signer else {
            throw ServiceError(
                status: 501, code: "issuing_disabled", message: "this service has no signing key configured")
        }
        let transactions = try ledgerOperation { () throws(LedgerError) in
            try ledger.transactions(customerID: customerID, bundleID: bundleID)
        }
        let receipt = Receipt(
            bundleID: bundleID, creationDate: clock(), receiptType: configuration.environment.receiptType,
            applicationVersion: request.queryValue("application_version"),
            inAppPurchases: transactions.map(\.purchase))
        let signed: [UInt8]
        do {
            signed = try signer.sign(receipt)
        } catch {
            throw ServiceError(status: 500, code: "signing_failed", message: "\(error)")
        }
        if request.header("accept")?.contains("text/plain") == true {
            return HTTPResponse(
                status: 200, headers: [("Content-Type", "text/plain")], body: Array(Base64.encode(signed).utf8))
        }
        return HTTPResponse(status: 200, headers: [("Content-Type", "application/pkcs7-mime")], body: signed)
    }
}
