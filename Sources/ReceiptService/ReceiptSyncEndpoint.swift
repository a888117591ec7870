import HTTPServer
import ReceiptLedger
import ReceiptModel
import StrictJSON

/// `POST /v1/receipts` `{"customer_id": …, "receipt-data": BASE64}` (token): how StoreKit 1 apps "sync purchases".
/// The app receipt is verified as `/verifyReceipt` verifies it (same anchors, limits and environment rule), then
/// every purchase it holds is recorded for the customer, with its refund when it has a `cancellation_date`, all in
/// one commit: a purchase that conflicts with the ledger (409, naming the fields) stores nothing, but an expiry
/// Apple moved later moves the recorded one (``LedgerChange/extend(_:)``). Answers 201 when anything was new, else
/// 200, with every transaction as stored.
extension ReceiptService {
    func recordReceipt(_ request: HTTPRequest) throws(ServiceError) -> HTTPResponse {
        let customerID: String
        let receiptText: String
        let body = try request.jsonBody()
        do throws(JSONFieldError) {
            let reader = try JSONObjectReader(body)
            try reader.rejectUnknownKeys(allowed: ["customer_id", "receipt-data"])
            customerID = try reader.requiredString("customer_id")
            receiptText = try reader.requiredString("receipt-data")
        } catch {
            throw .invalidBody(error)
        }
        let receipt: Receipt
        do {
            receipt = try verifier.verify(Array(receiptText.utf8)).receipt
        } catch {
            metrics.recordVerification(outcome: error.code.rawValue)
            throw ServiceError(status: 422, code: error.code.rawValue, message: "receipt-data: \(error.message)")
        }
        if let refusal = environmentRefusal(receipt.receiptType) {
            metrics.recordVerification(outcome: refusal.code)
            throw ServiceError(status: 422, code: refusal.code, message: "receipt-data: \(refusal.message)")
        }
        metrics.recordVerification(outcome: "valid")
        var changes: [LedgerChange] = []
        for var purchase in receipt.inAppPurchases {
            let cancelled = purchase.cancellationDate
            purchase.cancellationDate = nil
            purchase.originalTransactionID = purchase.originalTransactionID ?? purchase.transactionID
            purchase.originalPurchaseDate = purchase.originalPurchaseDate ?? purchase.purchaseDate
            let transaction = LedgerTransaction(customerID: customerID, bundleID: receipt.bundleID, purchase: purchase)
            try Self.checkIdentifiers(transaction)
            changes.append(.extend(transaction))
            if let cancelled { changes.append(.cancel(transactionID: purchase.transactionID, at: cancelled)) }
        }
        guard !changes.isEmpty else {
            throw ServiceError(
                status: 422, code: "no_purchases", message: "receipt-data: the receipt holds no purchases")
        }
        let outcomes = try ledgerOperation { () throws(LedgerError) in try ledger.apply(changes) }
        let (created, stored, _) = Self.stored(outcomes)
        let transactions = receipt.inAppPurchases.compactMap { stored[$0.transactionID] }
        return .json(
            status: created ? 201 : 200,
            JSONObject(["transactions": .array(transactions.map { .object(Self.json($0)) })]))
    }
}
