import Entitlements
import HTTPServer
import ReceiptLedger
import ReceiptModel
import ReceiptVerifier
import StrictJSON

/// `POST /v1/entitlements`: `{"receipts": [BASE64…], "catalog_id": ID | "catalog": {…}, "now"?: RFC3339}` → the
/// entitlement report of `receipt entitlements --json`. Every receipt must verify (422 naming the first that does
/// not); nothing is evaluated otherwise.
extension ReceiptService {
    /// Most receipts one request may carry.
    static let maximumReceiptsPerRequest = 100

    func entitlements(_ request: HTTPRequest) throws(ServiceError) -> HTTPResponse {
        let receipts: [String]
        let catalog: Catalog
        let now: ReceiptDate
        let body = try request.jsonBody()
        do throws(JSONFieldError) {
            let reader = try JSONObjectReader(body)
            try reader.rejectUnknownKeys(allowed: ["receipts", "catalog_id", "catalog", "now"])
            guard let list = try reader.strings("receipts"), !list.isEmpty else {
                throw JSONFieldError(path: "receipts", rule: "is required: a non-empty array of base64 receipts")
            }
            guard list.count <= Self.maximumReceiptsPerRequest else {
                throw JSONFieldError(path: "receipts", rule: "must hold at most \(Self.maximumReceiptsPerRequest)")
            }
            receipts = list
            catalog = try self.catalog(reader)
            if let text = try reader.string("now") {
                guard let date = ReceiptDate(rfc3339: text) else {
                    throw JSONFieldError(path: "now", rule: "\"\(text)\" is not an RFC 3339 date")
                }
                now = date
            } else {
                now = clock()
            }
        } catch {
            throw .invalidBody(error)
        }
        var verified: [VerifiedReceipt] = []
        for (index, receipt) in receipts.enumerated() {
            do {
                verified.append(try verifier.verify(Array(receipt.utf8)))
                metrics.recordVerification(outcome: "valid")
            } catch {
                metrics.recordVerification(outcome: error.code.rawValue)
                throw ServiceError(
                    status: 422, code: "invalid_receipt",
                    message: "receipts[\(index)]: \(error.code.rawValue): \(error.message)")
            }
        }
        do {
            return .json(try EntitlementEngine(catalog: catalog).evaluate(verified, at: now).json)
        } catch {
            throw ServiceError(status: 422, code: error.code.rawValue, message: error.message)
        }
    }

    /// `GET /v1/customers/{customer_id}/entitlements?bundle_id=…[&catalog_id=…][&now=RFC3339]` (token): what the
    /// customer has unlocked, from the ledger's transactions of that app and Apple's renewal info of its
    /// subscriptions (billing retry within Apple's grace period is grace), in the JSON of `/v1/entitlements`. The
    /// catalog is `catalog_id`'s, else the one whose `bundle_id` is the app's.
    func customerEntitlements(_ request: HTTPRequest, customerID: String) throws(ServiceError) -> HTTPResponse {
        guard let bundleID = request.queryValue("bundle_id"), !bundleID.isEmpty else {
            throw .badRequest("the query argument bundle_id is required")
        }
        let catalog: Catalog
        if let id = request.queryValue("catalog_id") {
            guard let named = configuration.catalogs[id] else {
                throw .badRequest("the query argument catalog_id names no configured catalog")
            }
            catalog = named
        } else {
            guard let own = configuration.catalog(forBundleID: bundleID) else {
                throw .badRequest("no catalog names bundle_id \"\(bundleID)\": give the query argument catalog_id")
            }
            catalog = own
        }
        var now = clock()
        if let text = request.queryValue("now") {
            guard let date = ReceiptDate(rfc3339: text) else {
                throw .badRequest("the query argument now: \"\(text)\" is not an RFC 3339 date")
            }
            now = date
        }
        let (transactions, renewals) = try customerRecords(customerID: customerID, bundleID: bundleID)
        return .json(
            try entitlementReport(
                purchases: transactions.map(\.purchase), renewals: renewals, bundleID: bundleID, catalog: catalog,
                at: now))
    }

    /// The customer's transactions in the app `bundleID` and the renewal info stored for its subscriptions.
    func customerRecords(customerID: String, bundleID: String) throws(ServiceError) -> (
        [LedgerTransaction], [LedgerRenewalInfo]
    ) {
        try ledgerOperation { () throws(LedgerError) -> ([LedgerTransaction], [LedgerRenewalInfo]) in
            let transactions = try ledger.transactions(customerID: customerID, bundleID: bundleID)
            let subscriptions = Set(
                transactions.map(\.purchase).filter { $0.expiresDate != nil }.compactMap(\.originalTransactionID))
            return (transactions, try ledger.renewalInfo(originalTransactionIDs: subscriptions.sorted()))
        }
    }

    /// What `purchases` of the app `bundleID` unlock under `catalog` at `now`, Apple's renewal info counting
    /// billing retry within the grace period as grace: the report of `/v1/entitlements`.
    func entitlementReport(
        purchases: [InAppPurchase], renewals: [LedgerRenewalInfo], bundleID: String, catalog: Catalog,
        at now: ReceiptDate
    ) throws(ServiceError) -> JSONObject {
        var states: [String: SubscriptionRenewal] = [:]
        for info in renewals {
            states[info.originalTransactionID] = SubscriptionRenewal(
                isInBillingRetryPeriod: info.isInBillingRetryPeriod ?? false,
                gracePeriodExpiresDate: info.gracePeriodExpiresDate)
        }
        do {
            return try EntitlementEngine(catalog: catalog).evaluate(
                purchases: purchases, bundleID: bundleID, renewals: states, at: now
            ).json
        } catch {
            throw ServiceError(status: 422, code: error.code.rawValue, message: error.message)
        }
    }

    /// The catalog named by `catalog_id` or given inline as `catalog`, exactly one of them.
    private func catalog(_ reader: JSONObjectReader) throws(JSONFieldError) -> Catalog {
        switch (try reader.string("catalog_id"), reader.value("catalog")) {
        case (let id?, nil):
            guard let catalog = configuration.catalogs[id] else {
                // The configured ids are not listed: this endpoint may be open to anyone.
                throw JSONFieldError(path: "catalog_id", rule: "no catalog with this id is configured")
            }
            return catalog
        case (nil, let inline?):
            do {
                return try Catalog(json: inline.serializedBytes())
            } catch {
                throw JSONFieldError(path: "catalog", rule: "\(error)")
            }
        case (nil, nil): throw JSONFieldError(path: "catalog_id", rule: "give catalog_id or an inline catalog")
        case (.some, .some): throw JSONFieldError(path: "catalog", rule: "give catalog_id or catalog, not both")
        }
    }
}
