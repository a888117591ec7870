import HTTPServer
import StrictJSON

/// `GET /inApps/v1/transactions/{transactionId}` (Apple's Get Transaction Info): `{"signedTransactionInfo"}`, the
/// stored transaction signed now; 4040010 for an id the ledger does not hold for the token's app.
extension ReceiptService {
    func storeTransactionInfo(bundleID: String, transactionID: String) throws(ServiceError) -> HTTPResponse {
        let signing = try storeAPISignedData(bundleID: bundleID)
        let transaction = try storeAPITransaction(transactionID, bundleID: bundleID)
        let signed = try signing.sign(signing.transactionPayload(transaction))
        return .json(JSONObject(["signedTransactionInfo": .string(signed)]))
    }
}
