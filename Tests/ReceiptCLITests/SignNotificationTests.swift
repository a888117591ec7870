import Foundation
import StrictJSON
import Testing

@Suite("receipt sign --format notification")
struct SignNotificationTests {
    static let request = """
        {"notification_type": "DID_RENEW", "subtype": "BILLING_RECOVERY",
         "notification_uuid": "0b4e2a5c-3f6d-4e8a-9c1b-2d7f6e5a4b3c", "signed_date": "2024-06-05T12:00:00Z",
         "bundle_id": "com.example.game", "app_apple_id": 1234567890, "bundle_version": "1.0",
         "environment": "Sandbox", "status": 1,
         "transaction": {"product_id": "com.example.pro.monthly", "transaction_id": "3", "original_transaction_id": "2",
           "purchase_date": "2024-06-01T10:00:00Z", "expires_date": "2024-07-01T10:00:00Z",
           "cancellation_date_ms": 1717500000000, "app_account_token": "7E3FB20B-4CDB-47CC-936D-99D65F608138",
           "revocation_reason": 1, "signed_date": "2024-06-05T11:00:00Z"},
         "renewal_info": {"original_transaction_id": "2", "product_id": "com.example.pro.monthly",
           "auto_renew_product_id": "com.example.pro.yearly", "auto_renew_status": 0, "expiration_intent": 1,
           "is_in_billing_retry_period": true, "grace_period_expires_date": "2024-06-08T10:00:00Z",
           "price_increase_status": 1, "renewal_date": "2024-07-01T10:00:00Z"}}
        """

    static let test = """
        {"notification_type": "TEST", "signed_date": "2024-06-05T12:00:00Z", "bundle_id": "com.example.game"}
        """

    static let sign = [
        "sign", "--format", "notification", "--key", "dev/receipt-signer.key", "--cert", "dev/receipt-signer.pem",
        "--chain", "dev/intermediate-ca.pem", "notification.json",
    ]

    /// A runner with an EC chain in `dev/` (or `algorithm`'s) and `request` as `notification.json`.
    func runner(_ request: String, algorithm: String = "ec") throws -> CLIRunner {
        let runner = try CLIRunner()
        #expect(try runner.run(["certs", "create", "dev", "--algorithm", algorithm]).status == 0)
        try runner.write("notification.json", request)
        return runner
    }

    /// Signs `notification.json` into `body.json` and verifies it under the dev root; the `--json` verdict.
    func signAndVerify(_ runner: CLIRunner) throws -> JSONValue {
        let signed = try runner.run(Self.sign + ["-o", "body.json"])
        #expect(signed.status == 0, "\(signed.standardError)")
        let verified = try runner.run(["verify", "body.json", "--trust", "dev/root-ca.pem", "--json"])
        #expect(verified.status == 0, "\(verified.output)")
        return try JSONValue(parsing: verified.standardOutput)
    }

    @Test("a notification with transaction and renewal info verifies, and its decoded fields are the input's")
    func signedFieldsVerify() throws {
        let result = try signAndVerify(try runner(Self.request))
        #expect(result["format"] == .string("server_notification"))
        let notification = result["notification"]
        #expect(notification?["notificationType"] == .string("DID_RENEW"))
        #expect(notification?["subtype"] == .string("BILLING_RECOVERY"))
        #expect(notification?["notificationUUID"] == .string("0b4e2a5c-3f6d-4e8a-9c1b-2d7f6e5a4b3c"))
        #expect(notification?["version"] == .string("2.0"))
        #expect(notification?["signedDate"] == .integer(1_717_588_800_000))
        #expect(notification?["data"]?["appAppleId"] == .integer(1_234_567_890))
        #expect(notification?["data"]?["bundleVersion"] == .string("1.0"))
        #expect(notification?["data"]?["environment"] == .string("Sandbox"))
        #expect(notification?["data"]?["status"] == .integer(1))
        let transaction = result["transaction"]
        #expect(transaction?["transactionId"] == .string("3"))
        #expect(transaction?["originalTransactionId"] == .string("2"))
        #expect(transaction?["purchaseDate"] == .integer(1_717_236_000_000))
        #expect(transaction?["expiresDate"] == .integer(1_719_828_000_000))
        #expect(transaction?["appAccountToken"] == .string("7e3fb20b-4cdb-47cc-936d-99d65f608138"))
        #expect(transaction?["revocationDate"] == .integer(1_717_500_000_000))
        #expect(transaction?["revocationReason"] == .integer(1))
        #expect(transaction?["signedDate"] == .integer(1_717_585_200_000))
        #expect(transaction?["environment"] == .string("Sandbox"))
        let renewal = result["renewal_info"]
        #expect(renewal?["originalTransactionId"] == .string("2"))
        #expect(renewal?["productId"] == .string("com.example.pro.monthly"))
        #expect(renewal?["autoRenewProductId"] == .string("com.example.pro.yearly"))
        #expect(renewal?["autoRenewStatus"] == .integer(0))
        #expect(renewal?["expirationIntent"] == .integer(1))
        #expect(renewal?["isInBillingRetryPeriod"] == .bool(true))
        #expect(renewal?["gracePeriodExpiresDate"] == .integer(1_717_840_800_000))
        #expect(renewal?["priceIncreaseStatus"] == .integer(1))
        #expect(renewal?["renewalDate"] == .integer(1_719_828_000_000))
        #expect(renewal?["signedDate"] == .integer(1_717_588_800_000))
        #expect(renewal?["environment"] == .string("Sandbox"))
    }

    @Test("the output is exactly the body Apple POSTs: one signedPayload member and a newline")
    func bodyShape() throws {
        let runner = try runner(Self.test)
        let signed = try runner.run(Self.sign)
        #expect(signed.status == 0, "\(signed.standardError)")
        #expect(signed.standardOutput.last == UInt8(ascii: "\n"))
        guard case .object(let body) = try JSONValue(parsing: signed.standardOutput) else {
            Issue.record("not an object: \(signed.output)")
            return
        }
        #expect(body.keys == ["signedPayload"])
    }

    @Test("without notification_uuid, each run gets a different random lower-case UUID version 4")
    func generatedUUID() throws {
        let runner = try runner(Self.test)
        var seen: [String] = []
        for _ in 0..<2 {
            guard case .string(let uuid)? = try signAndVerify(runner)["notification"]?["notificationUUID"] else {
                Issue.record("no notificationUUID")
                return
            }
            let version4 = #/^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/#
            #expect(uuid.wholeMatch(of: version4) != nil, "\(uuid)")
            seen.append(uuid)
        }
        #expect(seen[0] != seen[1])
    }

    @Test("a TEST notification has data with neither transaction nor renewal info, in Production by default")
    func testNotification() throws {
        let result = try signAndVerify(try runner(Self.test))
        #expect(result["notification"]?["notificationType"] == .string("TEST"))
        #expect(result["notification"]?["data"]?["bundleId"] == .string("com.example.game"))
        #expect(result["notification"]?["data"]?["environment"] == .string("Production"))
        #expect(result["notification"]?["data"]?["signedTransactionInfo"] == nil)
        #expect(result["notification"]?["data"]?["signedRenewalInfo"] == nil)
        #expect(result["transaction"] == nil)
        #expect(result["renewal_info"] == nil)
    }

    @Test("a RENEWAL_EXTENSION summary is signed in place of data, with the notification's app and environment")
    func renewalExtensionSummary() throws {
        let request = """
            {"notification_type": "RENEWAL_EXTENSION", "subtype": "SUMMARY", "signed_date": "2024-06-05T12:00:00Z",
             "bundle_id": "com.example.game", "app_apple_id": 1234567890, "environment": "Sandbox",
             "summary": {"request_identifier": "extend-1", "product_id": "com.example.pro.monthly",
               "storefront_country_codes": ["USA"], "succeeded_count": 41, "failed_count": 1}}
            """
        let notification = try signAndVerify(try runner(request))["notification"]
        #expect(notification?["data"] == nil)
        #expect(
            notification?["summary"]
                == .object(
                    JSONObject([
                        "requestIdentifier": .string("extend-1"), "environment": .string("Sandbox"),
                        "appAppleId": .integer(1_234_567_890), "bundleId": .string("com.example.game"),
                        "productId": .string("com.example.pro.monthly"),
                        "storefrontCountryCodes": .array([.string("USA")]),
                        "failedCount": .integer(1), "succeededCount": .integer(41),
                    ])))
    }

    @Test(
        "an unknown key, a missing or bad date is a rejected request naming the field",
        arguments: [
            (
                #"{"notification_type":"TEST","signed_date":"2024-06-05T12:00:00Z","bundle_id":"b","receipt_type":"Sandbox"}"#,
                "receipt_type"
            ),
            (#"{"notification_type":"TEST","bundle_id":"b"}"#, "signed_date"),
            (#"{"notification_type":"TEST","signed_date":"yesterday","bundle_id":"b"}"#, "signed_date"),
            (
                #"{"notification_type":"TEST","signed_date":"2024-06-05T12:00:00Z","bundle_id":"b","transaction":"#
                    + #"{"product_id":"p","transaction_id":"1","purchase_date":"2024-06-01T00:00:00Z","device_id":"x"}}"#,
                "transaction.device_id"
            ),
            (
                #"{"notification_type":"TEST","signed_date":"2024-06-05T12:00:00Z","bundle_id":"b","renewal_info":"#
                    + #"{"original_transaction_id":"1","product_id":"p","renewal_date":"soon"}}"#,
                "renewal_info.renewal_date"
            ),
            (
                #"{"notification_type":"RENEWAL_EXTENSION","signed_date":"2024-06-05T12:00:00Z","bundle_id":"b","#
                    + #""status":1,"summary":{"request_identifier":"r","product_id":"p"}}"#,
                "status"
            ),
            (
                #"{"notification_type":"RENEWAL_EXTENSION","signed_date":"2024-06-05T12:00:00Z","bundle_id":"b","#
                    + #""summary":{"request_identifier":"r"}}"#,
                "summary.product_id"
            ),
        ])
    func rejectedRequest(request: String, field: String) throws {
        let result = try runner(request).run(Self.sign)
        #expect(result.status == 1)
        #expect(result.standardError.contains("\(field):"), "\(result.standardError)")
        #expect(result.standardOutput.isEmpty)
    }

    @Test("an RSA key is a rejected request: ES256 signs with EC P-256")
    func rsaKey() throws {
        let result = try runner(Self.test, algorithm: "rsa").run(Self.sign)
        #expect(result.status == 1)
        #expect(result.standardError.contains("P-256"), "\(result.standardError)")
    }
}
