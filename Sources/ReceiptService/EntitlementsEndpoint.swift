import Entitlements
import HTTPServer
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
