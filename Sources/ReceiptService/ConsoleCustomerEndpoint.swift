import HTTPServer
import ReceiptLedger
import ReceiptModel
import StrictJSON

/// `GET /console/api/customer?query=Q`: one customer across every app the service knows (`store_api` apps,
/// `apple_notifications.bundle_ids`, the catalogs' bundle ids). `Q` is looked up as a transaction id, then as an
/// original transaction id, then as a customer id; the answer has, per app with transactions, the transactions,
/// the renewal info of the subscriptions and what the app's catalog says they unlock now. 404 when `Q` is none
/// of them.
extension ReceiptService {
    func consoleCustomer(_ request: HTTPRequest) throws(ServiceError) -> HTTPResponse {
        guard let query = request.queryValue("query"), !query.isEmpty,
            query.utf8.count <= Self.maximumIdentifierLength
        else {
            throw .badRequest("the query argument query must be 1 to \(Self.maximumIdentifierLength) bytes")
        }
        let (customerID, matchedBy, bundleID) = try ledgerOperation {
            () throws(LedgerError) -> (String, String, String?) in
            if let transaction = try ledger.transaction(id: query) {
                return (transaction.customerID, "transaction_id", transaction.bundleID)
            }
            if let customerID = try ledger.customerID(originalTransactionID: query) {
                return (customerID, "original_transaction_id", nil)
            }
            return (query, "customer_id", nil)
        }
        let now = clock()
        var bundleIDs = configuration.knownBundleIDs
        if let bundleID, !bundleIDs.contains(bundleID) { bundleIDs.append(bundleID) }
        var apps: [JSONValue] = []
        for bundleID in bundleIDs {
            let (transactions, renewals) = try customerRecords(customerID: customerID, bundleID: bundleID)
            guard !transactions.isEmpty else { continue }
            let entitlements = try configuration.catalog(forBundleID: bundleID).map { catalog throws(ServiceError) in
                try entitlementReport(
                    purchases: transactions.map(\.purchase), renewals: renewals, bundleID: bundleID,
                    catalog: catalog, at: now)["entitlements"] ?? .null
            }
            apps.append(
                .object(
                    JSONObject([
                        "bundle_id": .string(bundleID),
                        "transactions": .array(transactions.map { .object(Self.consoleJSON($0.purchase)) }),
                        "renewal_info": .array(renewals.map { .object(Self.consoleJSON($0)) }),
                        "entitlements": entitlements ?? .null,
                    ])))
        }
        guard !apps.isEmpty else {
            throw ServiceError(
                status: 404, code: "not_found",
                message: "no customer, transaction or original transaction has this id in the apps the service knows")
        }
        return .json(
            JSONObject([
                "customer_id": .string(customerID), "matched_by": .string(matchedBy), "now": .string(now.rfc3339),
                "apps": .array(apps),
            ]))
    }

    /// A transaction as the console shows it.
    private static func consoleJSON(_ purchase: InAppPurchase) -> JSONObject {
        JSONObject([
            "transaction_id": .string(purchase.transactionID),
            "original_transaction_id": purchase.originalTransactionID.map(JSONValue.string) ?? .null,
            "product_id": .string(purchase.productID),
            "purchase_date": .string(purchase.purchaseDate.rfc3339),
            "expires_date": purchase.expiresDate.map { .string($0.rfc3339) } ?? .null,
            "cancellation_date": purchase.cancellationDate.map { .string($0.rfc3339) } ?? .null,
            "quantity": purchase.quantity.map(JSONValue.integer) ?? .null,
            "subscription": .bool(purchase.expiresDate != nil),
        ])
    }

    /// A subscription's renewal info as the console shows it.
    private static func consoleJSON(_ info: LedgerRenewalInfo) -> JSONObject {
        JSONObject([
            "original_transaction_id": .string(info.originalTransactionID),
            "product_id": .string(info.productID),
            "auto_renew_product_id": info.autoRenewProductID.map(JSONValue.string) ?? .null,
            "auto_renews": info.autoRenews.map(JSONValue.bool) ?? .null,
            "expiration_intent": info.expirationIntent.map(JSONValue.integer) ?? .null,
            "is_in_billing_retry_period": info.isInBillingRetryPeriod.map(JSONValue.bool) ?? .null,
            "grace_period_expires_date": info.gracePeriodExpiresDate.map { .string($0.rfc3339) } ?? .null,
            "signed_date": .string(info.signedDate.rfc3339),
        ])
    }
}
