import Entitlements
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
/// the ledger could not be read), `environment`, and for status 0 `receipt` (with Apple's `*_pst` twins and
/// `request_date`) and, when the receipt holds an auto-renewable subscription, `latest_receipt_info` (oldest
/// first) and `latest_receipt`: the receipt as sent, or a freshly signed one when the ledger knows newer
/// transactions. A failure also carries `error` with this project's code and message.
extension ReceiptService {
    /// Receipt types of Apple's production environment (`receipt_type`, field 0, exactly as written).
    static let productionReceiptTypes: Set<String> = ["Production", "ProductionVPP"]
    /// Receipt types of Apple's sandbox and of Xcode's StoreKit testing.
    static let sandboxReceiptTypes: Set<String> = ["ProductionSandbox", "ProductionVPPSandbox", "Sandbox", "Xcode"]

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
        if let refusal = environmentRefusal(receipt.receiptType) {
            metrics.recordVerification(outcome: refusal.code)
            return verifyReceiptStatus(refusal.status, code: refusal.code, message: refusal.message)
        }
        let requestDate = clock()
        let latest: LatestTransactions
        do {
            latest = try latestTransactions(of: receipt)
        } catch {
            metrics.recordVerification(outcome: "ledger_unavailable")
            return verifyReceiptStatus(
                21009, code: "ledger_unavailable", message: "the ledger could not be read: \(error.publicDetail)")
        }
        metrics.recordVerification(outcome: "valid")
        // As Apple's, latest_receipt_info and latest_receipt come only with auto-renewable subscriptions
        // (purchases that expire).
        let subscribed = latest.transactions.contains { $0.expiresDate != nil }
        var latestReceipt: [UInt8]?
        if subscribed && !latest.ledgerHasNewer {
            latestReceipt = Self.canonicalBase64(parsed)
        } else if subscribed && configuration.signer != nil {
            var updated = receipt
            updated.inAppPurchases = latest.transactions
            // A receipt this service would itself refuse (too many purchases, too large) is not issued.
            latestReceipt = (try? issue(updated)).map { Array(Base64.encode($0).utf8) }
        }
        return .json(writing: { answer in
            answer.add(Keys.status, integer: 0)
            answer.add(Keys.environment, string: configuration.environment.rawValue)
            answer.addObject(Keys.receipt) {
                receipt.addVerifyReceiptJSON(to: &$0, pacificTime: pacificTime, requestDate: requestDate)
            }
            guard subscribed else { return }
            let listed =
                parsed.excludeOldTransactions ? Self.latestOfEachSubscription(latest.transactions) : latest.transactions
            let catalog = configuration.catalog(forBundleID: receipt.bundleID)
            answer.addObjects(Keys.latestReceiptInfo, count: listed.count) { index, entry in
                addLatestReceiptInfo(listed[index], catalog: catalog, to: &entry)
            }
            if let latestReceipt {
                // Base64 needs no escape: copied as it is, not scanned for one.
                answer.add(Keys.latestReceipt, asciiCount: latestReceipt.count) {
                    $0.append(copying: latestReceipt.span)
                }
            }
            guard !latest.renewals.isEmpty else { return }
            answer.addObjects(Keys.pendingRenewalInfo, count: latest.renewals.count) { index, entry in
                addPendingRenewalInfo(latest.renewals[index], to: &entry)
            }
        })
    }

    /// Why a receipt of `receiptType` is not for this service, as verifyReceipt answers it: 21007 for a sandbox
    /// receipt sent to production, 21008 for the reverse, 21003 for a receipt whose type is absent or none of
    /// Apple's (the environment it belongs to cannot be told, so it is not accepted); nil when it belongs here.
    func environmentRefusal(_ receiptType: String?) -> VerifyReceiptRefusal? {
        let production = configuration.environment == .production
        guard let type = receiptType else {
            return VerifyReceiptRefusal(
                status: 21003, code: "unknown_receipt_type",
                message: "the receipt has no receipt_type, so its environment cannot be told; this service accepts "
                    + Self.acceptedTypes(production: production))
        }
        switch (Self.productionReceiptTypes.contains(type), Self.sandboxReceiptTypes.contains(type)) {
        case (true, _) where production, (_, true) where !production: return nil
        case (_, true):
            return VerifyReceiptRefusal(
                status: 21007, code: "sandbox_receipt", message: "a \(type) receipt was sent to a production service")
        case (true, _):
            return VerifyReceiptRefusal(
                status: 21008, code: "production_receipt", message: "a \(type) receipt was sent to a sandbox service")
        default:
            return VerifyReceiptRefusal(
                status: 21003, code: "unknown_receipt_type",
                message: "receipt_type \"\(type)\" is not one of Apple's; this service accepts "
                    + Self.acceptedTypes(production: production))
        }
    }

    private static func acceptedTypes(production: Bool) -> String {
        (production ? productionReceiptTypes : sandboxReceiptTypes).sorted().joined(separator: ", ")
    }

    /// Adds the members of one entry of `latest_receipt_info`: the purchase as in `in_app`, and for a subscription the catalog's
    /// group as `subscription_group_identifier`, as Apple's entries carry it.
    func addLatestReceiptInfo<Entry: JSONObjectBuilder>(
        _ purchase: InAppPurchase, catalog: Catalog?, to entry: inout Entry
    ) {
        purchase.addVerifyReceiptJSON(to: &entry, pacificTime: pacificTime)
        if let product = catalog?.product(purchase.productID), product.type == .autoRenewable {
            entry.add(Keys.subscriptionGroupIdentifier, string: product.appleGroupIdentifier)
        }
    }

    /// Adds the members of one entry of `pending_renewal_info` in Apple's order and string conventions:
    /// `auto_renew_product_id`, `original_transaction_id`, `product_id`, `auto_renew_status` (`"0"`/`"1"`), then
    /// those Apple sends only when they apply: `expiration_intent`, `is_in_billing_retry_period`,
    /// `grace_period_expires_date` (with `_ms` and `_pst`) and `price_consent_status`.
    func addPendingRenewalInfo<Entry: JSONObjectBuilder>(_ info: LedgerRenewalInfo, to entry: inout Entry) {
        entry.add(Keys.autoRenewProductID, string: info.autoRenewProductID)
        entry.add(Keys.originalTransactionID, string: info.originalTransactionID)
        entry.add(Keys.productID, string: info.productID)
        entry.add(Keys.autoRenewStatus, string: info.autoRenews.map { $0 ? "1" : "0" })
        entry.add(Keys.expirationIntent, string: info.expirationIntent.map { String($0) })
        entry.add(Keys.isInBillingRetryPeriod, string: info.isInBillingRetryPeriod.map { $0 ? "1" : "0" })
        entry.addVerifyReceiptDate("grace_period_expires_date", info.gracePeriodExpiresDate, pacificTime: pacificTime)
        entry.add(Keys.priceConsentStatus, string: info.priceIncreaseStatus.map { String($0) })
    }

    /// The keys of the answer's members besides the receipt's, made once: every answer writes them.
    private enum Keys {
        static let status = JSONKey("status")
        static let environment = JSONKey("environment")
        static let receipt = JSONKey("receipt")
        static let latestReceiptInfo = JSONKey("latest_receipt_info")
        static let latestReceipt = JSONKey("latest_receipt")
        static let pendingRenewalInfo = JSONKey("pending_renewal_info")
        static let subscriptionGroupIdentifier = JSONKey("subscription_group_identifier")
        static let autoRenewProductID = JSONKey("auto_renew_product_id")
        static let originalTransactionID = JSONKey("original_transaction_id")
        static let productID = JSONKey("product_id")
        static let autoRenewStatus = JSONKey("auto_renew_status")
        static let expirationIntent = JSONKey("expiration_intent")
        static let isInBillingRetryPeriod = JSONKey("is_in_billing_retry_period")
        static let priceConsentStatus = JSONKey("price_consent_status")
    }

    /// The receipt data of a request whose receipt verified, as Apple echoes it in `latest_receipt`: base64
    /// without line breaks or spaces (the text as sent when it has none), whose bytes are only the base64
    /// alphabet and `=`, since the text decoded.
    static func canonicalBase64(_ request: VerifyReceiptRequest) -> [UInt8] {
        let receiptData = request.receiptData
        if receiptData.first == 0x30 { return Array(Base64.encode(receiptData).utf8) }
        guard Base64.holdsLayout(receiptData.span) else { return receiptData }
        let isLayout = { (byte: UInt8) in byte == 0x20 || byte == 0x0A || byte == 0x0D }
        return receiptData.filter { !isLayout($0) }
    }

    /// A receipt's purchases brought up to date from the ledger, in purchase order (oldest first, as Apple's
    /// `latest_receipt_info`), and whether the ledger knew anything the receipt does not say.
    struct LatestTransactions {
        var transactions: [InAppPurchase]
        /// A transaction the receipt lacks, or a refund or expiry that differs from the receipt's.
        var ledgerHasNewer: Bool
        /// Apple's renewal info of the subscriptions among them that the ledger holds, for `pending_renewal_info`.
        var renewals: [LedgerRenewalInfo] = []
    }

    /// The receipt's purchases brought up to date from the ledger: when the ledger knows the customer who made any
    /// of them, all of that customer's transactions for the app, with the ledger's version (refunds included)
    /// replacing the receipt's.
    func latestTransactions(of receipt: Receipt) throws(LedgerError) -> LatestTransactions {
        let inPurchaseOrder = { (purchases: [InAppPurchase]) in
            let before = { (first: InAppPurchase, second: InAppPurchase) in
                (first.purchaseDate, first.transactionID) < (second.purchaseDate, second.transactionID)
            }
            // A receipt usually lists its purchases in this order already: then the array is kept as it is (the
            // sort is stable, so it would come out the same) rather than copied purchase by purchase.
            let ordered = purchases.indices.dropFirst().allSatisfy { !before(purchases[$0], purchases[$0 - 1]) }
            return ordered ? purchases : purchases.sorted(by: before)
        }
        let ids = receipt.inAppPurchases.map(\.transactionID)
        guard let known = try ledger.transaction(withAnyOf: ids), known.bundleID == receipt.bundleID else {
            return LatestTransactions(transactions: inPurchaseOrder(receipt.inAppPurchases), ledgerHasNewer: false)
        }
        let recorded = try ledger.transactions(customerID: known.customerID, bundleID: receipt.bundleID)
        var byID: [String: InAppPurchase] = [:]
        for purchase in receipt.inAppPurchases { byID[purchase.transactionID] = purchase }
        var newer = false
        for transaction in recorded {
            let purchase = transaction.purchase
            if let inReceipt = byID[purchase.transactionID] {
                newer =
                    newer || inReceipt.cancellationDate != purchase.cancellationDate
                    || inReceipt.expiresDate != purchase.expiresDate
            } else {
                newer = true
            }
            byID[purchase.transactionID] = purchase
        }
        let transactions = inPurchaseOrder(Array(byID.values))
        var subscriptions: [String] = []
        var seen = Set<String>()
        for purchase in transactions where purchase.expiresDate != nil {
            let original = purchase.originalTransactionID ?? purchase.transactionID
            if seen.insert(original).inserted { subscriptions.append(original) }
        }
        return LatestTransactions(
            transactions: transactions, ledgerHasNewer: newer,
            renewals: subscriptions.isEmpty ? [] : try ledger.renewalInfo(originalTransactionIDs: subscriptions))
    }

    /// With `exclude-old-transactions`: of each subscription (purchases with an expiry, grouped by original
    /// transaction), only the newest; other purchases stay. `inPurchaseOrder` must be sorted oldest first.
    static func latestOfEachSubscription(_ inPurchaseOrder: [InAppPurchase]) -> [InAppPurchase] {
        var seen = Set<String>()
        let newestFirst = inPurchaseOrder.reversed().filter { purchase in
            guard purchase.expiresDate != nil else { return true }
            return seen.insert(purchase.originalTransactionID ?? purchase.transactionID).inserted
        }
        return newestFirst.reversed()
    }
}

/// A verifyReceipt answer other than status 0: the status, this project's code and a message.
struct VerifyReceiptRefusal {
    let status: Int
    let code: String
    let message: String
}

/// The body of a verifyReceipt request. Unknown members are ignored, as Apple ignores them.
struct VerifyReceiptRequest {
    /// The UTF-8 of `receipt-data` as sent.
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
