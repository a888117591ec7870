import ReceiptJWS
import ReceiptModel
import StrictJSON

/// What `receipt sign --format notification` reads: an App Store Server Notification V2 in snake_case, with an
/// optional transaction in the purchase JSON's vocabulary and optional renewal info, or a renewal-extension summary
/// instead of both. Unknown keys are refused.
enum NotificationRequest {
    static let keys = dateKeys("signed_date").union([
        "notification_type", "subtype", "notification_uuid", "bundle_id", "app_apple_id", "bundle_version",
        "environment", "status", "transaction", "renewal_info", "summary",
    ])
    static let summaryKeys: Set<String> = [
        "request_identifier", "product_id", "storefront_country_codes", "succeeded_count", "failed_count",
    ]
    /// The keys a transaction has besides the purchase JSON's.
    static let transactionKeys = dateKeys("signed_date").union(["app_account_token", "revocation_reason"])
    static let renewalKeys = dateKeys("signed_date", "grace_period_expires_date", "renewal_date").union([
        "original_transaction_id", "product_id", "auto_renew_product_id", "auto_renew_status", "expiration_intent",
        "is_in_billing_retry_period", "price_increase_status",
    ])

    /// The notification the JSON text describes, its transaction and renewal info as payloads to sign.
    static func content(json text: [UInt8]) throws(JSONFieldError) -> NotificationContent {
        let document: JSONValue
        do {
            document = try JSONValue(parsing: text)
        } catch {
            throw JSONFieldError(path: "", rule: "the request is not valid JSON: \(error)")
        }
        let reader = try JSONObjectReader(document)
        try reader.rejectUnknownKeys(allowed: keys)
        guard let signedDate = try reader.date("signed_date") else { throw reader.error("signed_date", "is required") }
        let environmentName = try reader.string("environment") ?? AppStoreEnvironment.production.rawValue
        guard let environment = AppStoreEnvironment(rawValue: environmentName) else {
            let names = AppStoreEnvironment.allCases.map(\.rawValue).joined(separator: ", ")
            throw reader.error("environment", "must be one of \(names), found \"\(environmentName)\"")
        }
        var content = NotificationContent(
            notificationType: try reader.requiredString("notification_type"),
            notificationUUID: try uuid(reader, "notification_uuid"), signedDate: signedDate,
            bundleID: try reader.requiredString("bundle_id"), environment: environment)
        content.subtype = try reader.string("subtype")
        content.appAppleID = try reader.integer("app_apple_id", in: 1...Int64.max)
        content.bundleVersion = try reader.string("bundle_version")
        content.status = try reader.integer("status", in: 1...5)
        if let transaction = reader.value("transaction") {
            content.transaction = try transactionPayload(transaction, path: reader.path("transaction"), of: content)
        }
        if let renewal = try reader.object("renewal_info") {
            try renewal.rejectUnknownKeys(allowed: renewalKeys)
            var fields = RenewalInfoFields(
                originalTransactionID: try renewal.requiredString("original_transaction_id"),
                productID: try renewal.requiredString("product_id"))
            fields.autoRenewProductID = try renewal.string("auto_renew_product_id")
            fields.autoRenewStatus = try renewal.integer("auto_renew_status", in: 0...1)
            fields.expirationIntent = try renewal.integer("expiration_intent", in: Int64.min...Int64.max)
            fields.isInBillingRetryPeriod = try renewal.bool("is_in_billing_retry_period")
            fields.gracePeriodExpiresDate = try renewal.date("grace_period_expires_date")
            fields.priceIncreaseStatus = try renewal.integer("price_increase_status", in: Int64.min...Int64.max)
            fields.renewalDate = try renewal.date("renewal_date")
            content.renewalInfo = SignedRenewalInfo.payload(
                fields, environment: environment, signedDate: try renewal.date("signed_date") ?? signedDate)
        }
        if let summary = try reader.object("summary") {
            for key in ["transaction", "renewal_info", "status", "bundle_version"] where reader.value(key) != nil {
                throw reader.error(key, "a notification with a summary has no data, so no \(key)")
            }
            try summary.rejectUnknownKeys(allowed: summaryKeys)
            content.summary = RenewalExtensionSummary(
                requestIdentifier: try summary.requiredString("request_identifier"),
                productID: try summary.requiredString("product_id"),
                storefrontCountryCodes: try summary.strings("storefront_country_codes") ?? [],
                succeededCount: try summary.integer("succeeded_count", in: 0...Int64.max) ?? 0,
                failedCount: try summary.integer("failed_count", in: 0...Int64.max) ?? 0)
        }
        return content
    }

    /// A `JWSTransactionDecodedPayload` for the purchase JSON `value` and its notification-only keys.
    private static func transactionPayload(
        _ value: JSONValue, path: String, of content: NotificationContent
    ) throws(JSONFieldError) -> JSONObject {
        let purchase = try InAppPurchase(json: value, path: path, extraKeys: transactionKeys)
        let reader = try JSONObjectReader(value, path: path)
        return SignedTransaction.payload(
            for: purchase, bundleID: content.bundleID, environment: content.environment,
            signedDate: try reader.date("signed_date") ?? content.signedDate,
            appAccountToken: try uuid(reader, "app_account_token")?.lowercased(),
            revocationReason: try reader.integer("revocation_reason", in: Int64.min...Int64.max))
    }

    /// A UUID (8-4-4-4-12 hex digits, either case) as written.
    private static func uuid(_ reader: JSONObjectReader, _ key: String) throws(JSONFieldError) -> String? {
        guard let text = try reader.string(key) else { return nil }
        guard DeviceIdentifier(text)?.bytes.count == 16 else {
            throw reader.error(key, "\"\(text)\" is not a UUID (8-4-4-4-12 hex digits)")
        }
        return text
    }

    private static func dateKeys(_ names: String...) -> Set<String> { Set(names.flatMap { [$0, $0 + "_ms"] }) }
}
