import HTTPServer
import ReceiptCrypto
import ReceiptDER
import ReceiptLedger
import ReceiptModel
import ReceiptVerifier
import StrictJSON

/// `POST /verifyReceipt`: Apple's request and response, so that an existing client only changes its URL.
///
/// Request: `{"receipt-data": BASE64, "password"?: STRING, "exclude-old-transactions"?: BOOL}`. Response (HTTP
/// 200 whatever the outcome, as Apple's): `status` (0; 21000 unreadable request; 21002 malformed receipt; 21003 not
/// authenticated; 21004 wrong shared secret; 21007 sandbox receipt sent to production; 21008 the reverse; 21009
/// the ledger could not be read), `environment`, and for status 0 `receipt`, `latest_receipt_info` and, when the
/// service can sign and the receipt holds an auto-renewable subscription, `latest_receipt`. A failure also carries `error` with this project's code and message.
extension ReceiptService {
    /// Receipt types that belong to Apple's sandbox rather than production.
    static let sandboxReceiptTypes: Set<String> = ["ProductionSandbox", "Sandbox", "ProductionVPPSandbox", "Xcode"]

    func verifyReceiptStatus(_ status: Int, code: String? = nil, message: String? = nil) -> HTTPResponse {
        var object = JSONObject([
            "status": .integer(status), "environment": .string(configuration.environment.rawValue),
        ])
        if let code, let message {
            object["error"] = .object(JSONObject(["code": .string(code), "message": .string(message)]))
        }
        return .json(object)
    }

    func verifyReceipt(_ request: HTTPRequest) throws(ServiceError) -> HTTPResponse {
        let parsed: VerifyReceiptRequest
        do {
            parsed = try VerifyReceiptRequest(request.body)
        } catch {
            metrics.recordVerification(outcome: "unreadable_request")
            return verifyReceiptStatus(21000, code: "unreadable_request", message: error.description)
        }
        if let secret = configuration.sharedSecret {
            let expected = DigestAlgorithm.sha256.hash(Array(secret.utf8)[...])
            let given = DigestAlgorithm.sha256.hash(Array((parsed.password ?? "").utf8)[...])
            guard constantTimeEquals(expected, given) else {
                metrics.recordVerification(outcome: "shared_secret_mismatch")
                return verifyReceiptStatus(
                    21004, code: "shared_secret_mismatch", message: "password does not match the shared secret")
            }
        }
        let verified: VerifiedReceipt
        do {
            verified = try verifier.verify(parsed.receiptData)
        } catch {
            metrics.recordVerification(outcome: error.code.rawValue)
            return verifyReceiptStatus(error.status, code: error.code.rawValue, message: error.message)
        }
        let receipt = verified.receipt
        if let type = receipt.receiptType {
            let isSandbox = Self.sandboxReceiptTypes.contains(type)
            switch configuration.environment {
            case .production where isSandbox:
                metrics.recordVerification(outcome: "sandbox_receipt")
                return verifyReceiptStatus(
                    21007, code: "sandbox_receipt", message: "a \(type) receipt was sent to a production service")
            case .sandbox where !isSandbox:
                metrics.recordVerification(outcome: "production_receipt")
                return verifyReceiptStatus(
                    21008, code: "production_receipt", message: "a \(type) receipt was sent to a sandbox service")
            default: break
            }
        }
        let transactions: [InAppPurchase]
        do {
            transactions = try latestTransactions(of: receipt)
        } catch {
            metrics.recordVerification(outcome: "ledger_unavailable")
            return verifyReceiptStatus(21009, code: "ledger_unavailable", message: error.description)
        }
        metrics.recordVerification(outcome: "valid")
        var object = JSONObject([
            "status": .integer(0), "environment": .string(configuration.environment.rawValue),
            "receipt": .object(receipt.verifyReceiptJSON),
        ])
        let newestFirst = transactions.sorted {
            ($0.purchaseDate, $0.transactionID) > ($1.purchaseDate, $1.transactionID)
        }
        let listed = parsed.excludeOldTransactions ? Self.latestOfEachSubscription(newestFirst) : newestFirst
        object["latest_receipt_info"] = .array(listed.map { .object($0.verifyReceiptJSON) })
        // As Apple's, latest_receipt comes only with auto-renewable subscriptions (purchases that expire).
        if let signer = configuration.signer, transactions.contains(where: { $0.expiresDate != nil }) {
            var latest = receipt
            latest.creationDate = clock()
            latest.inAppPurchases = transactions
            do {
                object["latest_receipt"] = .string(Base64.encode(try signer.sign(latest)))
            } catch {
                throw ServiceError(status: 500, code: "signing_failed", message: "latest_receipt: \(error)")
            }
        }
        return .json(object)
    }

    /// The receipt's purchases brought up to date from the ledger: when the ledger knows the customer who made any
    /// of them, all of that customer's transactions for the app, with the ledger's version (refunds included)
    /// replacing the receipt's. In purchase order.
    func latestTransactions(of receipt: Receipt) throws(LedgerError) -> [InAppPurchase] {
        let ids = receipt.inAppPurchases.map(\.transactionID)
        guard let known = try ledger.transaction(withAnyOf: ids), known.bundleID == receipt.bundleID else {
            return receipt.inAppPurchases
        }
        let recorded = try ledger.transactions(customerID: known.customerID, bundleID: receipt.bundleID)
        var byID: [String: InAppPurchase] = [:]
        for purchase in receipt.inAppPurchases { byID[purchase.transactionID] = purchase }
        for transaction in recorded { byID[transaction.purchase.transactionID] = transaction.purchase }
        return byID.values.sorted { ($0.purchaseDate, $0.transactionID) < ($1.purchaseDate, $1.transactionID) }
    }

    /// With `exclude-old-transactions`: of each subscription (purchases with an expiry, grouped by original
    /// transaction), only the newest; other purchases stay. `newestFirst` must be sorted newest first.
    static func latestOfEachSubscription(_ newestFirst: [InAppPurchase]) -> [InAppPurchase] {
        var seen = Set<String>()
        return newestFirst.filter { purchase in
            guard purchase.expiresDate != nil else { return true }
            return seen.insert(purchase.originalTransactionID ?? purchase.transactionID).inserted
        }
    }
}

/// The body of a verifyReceipt request. Unknown members are ignored, as Apple ignores them.
struct VerifyReceiptRequest {
    let receiptData: [UInt8]
    let password: String?
    let excludeOldTransactions: Bool

    init(_ body: [UInt8]) throws(JSONFieldError) {
        let document: JSONValue
        do {
            document = try JSONValue(parsing: body)
        } catch {
            throw JSONFieldError(path: "", rule: "the request body is not valid JSON: \(error)")
        }
        let reader = try JSONObjectReader(document)
        receiptData = Array(try reader.requiredString("receipt-data").utf8)
        password = try reader.string("password")
        switch reader.value("exclude-old-transactions") {
        case nil: excludeOldTransactions = false
        case .bool(let flag): excludeOldTransactions = flag
        case .string("true"): excludeOldTransactions = true
        case .string("false"): excludeOldTransactions = false
        case let other?:
            throw JSONFieldError(
                path: "exclude-old-transactions", rule: "must be true or false, found \(other.serialized())")
        }
    }
}
