import Foundation
import StrictJSON
import Testing

/// `receipt verify` and `receipt inspect` take every format a backend receives and say which one it was.
@Suite("Formats: one entry point for every purchase proof")
struct FormatTests {
    static let jwsVectors = "Tests/ReceiptJWSTests/Vectors"
    static let appleG3 = "certs/apple/AppleRootCA-G3.cer"

    func root(_ path: String) -> String { CLIRunner.packageRoot.appendingPathComponent(path).path }

    func verify(_ path: String, _ extra: [String]) throws -> (Int32, JSONValue) {
        let result = try CLIRunner().run(["verify", root(path), "--json"] + extra)
        return (result.status, try JSONValue(parsing: result.standardOutput))
    }

    @Test("a real StoreKit 2 signed transaction verifies under Apple Root CA - G3 as format jws, kind transaction")
    func signedTransaction() throws {
        let (status, json) = try verify(
            "\(Self.jwsVectors)/mingos-assa/sandbox-transaction.jws", ["--trust", root(Self.appleG3)])
        #expect(status == 0)
        #expect(json["format"] == .string("jws"))
        #expect(json["kind"] == .string("transaction"))
        #expect(json["payload"]?["transactionId"] == .string("2000000847061981"))
    }

    @Test("signed renewal info is format jws, kind renewal_info; a bundle id cannot be checked on it")
    func renewalInfo() throws {
        let path = "\(Self.jwsVectors)/go-iap/signed-renewal-info.jws"
        let (status, json) = try verify(path, ["--trust", root(Self.appleG3)])
        #expect(status == 0)
        #expect(json["kind"] == .string("renewal_info"))
        let (refused, error) = try verify(path, ["--trust", root(Self.appleG3), "--bundle-id", "com.example"])
        #expect(refused == 1)
        #expect(error["error"]?["code"] == .string("wrong_bundle_id"))
    }

    @Test("a notification body verifies as format server_notification")
    func notification() throws {
        let (status, json) = try verify(
            "\(Self.jwsVectors)/aporat/test-notification-signed-payload.json", ["--trust", root(Self.appleG3)])
        #expect(status == 0)
        #expect(json["format"] == .string("server_notification"))
        #expect(json["notification"]?["notificationType"] == .string("TEST"))
    }

    @Test("StoreKit 2 data under the wrong root is untrusted; an app receipt under G3 is too")
    func wrongRoots() throws {
        let (status, json) = try verify(
            "\(Self.jwsVectors)/mingos-assa/sandbox-transaction.jws", ["--trust", root(CLITests.appleRoot)])
        #expect(status == 1)
        #expect(json["error"]?["code"] == .string("untrusted_chain"))
        let (receiptStatus, receipt) = try verify(CLITests.realReceipt, ["--trust", root(Self.appleG3)])
        #expect(receiptStatus == 1)
        #expect(receipt["format"] == .string("app_receipt"))
    }

    @Test("device and app version checks exist only for app receipts and are refused on other formats")
    func uncheckableOptions() throws {
        let (status, json) = try verify(
            "\(Self.jwsVectors)/mingos-assa/sandbox-transaction.jws",
            ["--trust", root(Self.appleG3), "--device-id", "6c:40:08:b5:94:5e"])
        #expect(status == 1)
        #expect(json["error"]?["code"] == .string("uncheckable_option"))
    }

    @Test("inspect reports the format and what each format claims, without a trust decision")
    func inspect() throws {
        let runner = try CLIRunner()
        for (path, format) in [
            (CLITests.realReceipt, "app_receipt"), ("\(Self.jwsVectors)/go-iap/signed-renewal-info.jws", "jws"),
            ("\(Self.jwsVectors)/aporat/test-notification-signed-payload.json", "server_notification"),
            ("Tests/ReceiptVerifierTests/Vectors/real/cargobay/legacy-nonconsumable.b64", "legacy_transaction_receipt"),
        ] {
            let result = try runner.run(["inspect", root(path), "--json"])
            #expect(result.status == 0, "\(path)")
            let json = try JSONValue(parsing: result.standardOutput)
            #expect(json["format"] == .string(format))
            #expect(json["trust_decision"] == .string("none"))
        }
    }
}

@Suite("receipt sign --format jws")
struct SignJWSTests {
    static let request = """
        {"bundle_id": "com.example.game", "receipt_creation_date": "2024-06-05T12:00:00Z", "receipt_type": "ProductionSandbox",
         "in_app": [
          {"product_id": "com.example.coins", "transaction_id": "1", "purchase_date": "2024-06-01T10:00:00Z"},
          {"product_id": "com.example.pro.monthly", "transaction_id": "2", "original_transaction_id": "2",
           "purchase_date": "2024-05-01T10:00:00Z", "expires_date": "2024-06-01T10:00:00Z"},
          {"product_id": "com.example.pro.monthly", "transaction_id": "3", "original_transaction_id": "2",
           "purchase_date": "2024-06-01T10:00:00Z", "expires_date": "2024-07-01T10:00:00Z"}]}
        """

    @Test("one signed transaction per purchase and renewal info for the latest period, each verifying back")
    func signAndVerify() throws {
        let runner = try CLIRunner()
        #expect(try runner.run(["certs", "create", "dev", "--algorithm", "ec"]).status == 0)
        try runner.write("purchases.json", Self.request)
        let signed = try runner.run([
            "sign", "--format", "jws", "--key", "dev/receipt-signer.key", "--cert", "dev/receipt-signer.pem",
            "--chain", "dev/intermediate-ca.pem", "--chain", "dev/root-ca.pem", "purchases.json", "-o", "signed.json",
        ])
        #expect(signed.status == 0, "\(signed.standardError)")
        let json = try JSONValue(parsing: runner.read("signed.json"))
        guard case .array(let transactions)? = json["signed_transactions"],
            case .array(let renewals)? = json["signed_renewal_info"]
        else {
            Issue.record("unexpected output \(json)")
            return
        }
        #expect(transactions.count == 3)
        #expect(renewals.count == 1)
        for (index, value) in (transactions + renewals).enumerated() {
            guard case .string(let compact) = value else { continue }
            try runner.write("item-\(index).jws", compact)
            let verified = try runner.run(["verify", "item-\(index).jws", "--trust", "dev/root-ca.pem", "--json"])
            #expect(verified.status == 0, "\(verified.output)")
            let result = try JSONValue(parsing: verified.standardOutput)
            #expect(result["payload"]?["environment"] == .string("Sandbox"))
            if index == 3 {
                #expect(result["kind"] == .string("renewal_info"))
                #expect(result["payload"]?["renewalDate"] == .integer(1_719_828_000_000))
            }
        }
    }

    @Test("the app-receipt purchase JSON signs as StoreKit 2 data too: its device_id is ignored, and said so")
    func samePurchaseJSON() throws {
        let runner = try CLIRunner()
        try runner.makeChainAndRequest(algorithm: "ec")
        let signed = try runner.run([
            "sign", "--format", "jws", "--key", "dev/receipt-signer.key", "--cert", "dev/receipt-signer.pem",
            "--chain", "dev/intermediate-ca.pem", "purchase.json",
        ])
        #expect(signed.status == 0, "\(signed.standardError)")
        #expect(signed.standardError.contains("device_id ignored"))
        let json = try JSONValue(parsing: signed.standardOutput)
        guard case .array(let transactions)? = json["signed_transactions"] else {
            Issue.record("unexpected output \(json)")
            return
        }
        #expect(transactions.count == 2)
    }

    @Test("an RSA key cannot sign ES256, and receipt-only options are refused")
    func refusals() throws {
        let runner = try CLIRunner()
        #expect(try runner.run(["certs", "create", "dev", "--algorithm", "rsa"]).status == 0)
        try runner.write("purchases.json", Self.request)
        let arguments = [
            "sign", "--format", "jws", "--key", "dev/receipt-signer.key", "--cert", "dev/receipt-signer.pem",
            "purchases.json",
        ]
        let rsa = try runner.run(arguments)
        #expect(rsa.status == 1)
        #expect(rsa.standardError.contains("P-256"), "\(rsa.standardError)")
        #expect(try runner.run(arguments + ["--compress"]).status == 2)
        #expect(try runner.run(arguments + ["--format", "xml"]).status == 2)
    }
}

@Suite("receipt entitlements over StoreKit 2 signed transactions")
struct EntitlementsFromSignedDataTests {
    @Test("signed transactions count as receipts' purchases do, and a mix of formats for one app is evaluated")
    func signedTransactions() throws {
        let runner = try CLIRunner()
        #expect(try runner.run(["certs", "create", "dev", "--algorithm", "ec"]).status == 0)
        try runner.write("purchases.json", SignJWSTests.request)
        try runner.write(
            "catalog.json",
            #"{"products":[{"id":"com.example.pro.monthly","type":"auto_renewable","entitlements":["pro"],"#
                + #""group":"main","rank":1},{"id":"com.example.coins","type":"consumable","entitlements":["coins"],"#
                + #""amount":100}]}"#)
        let sign = [
            "sign", "--key", "dev/receipt-signer.key", "--cert", "dev/receipt-signer.pem", "--chain",
            "dev/intermediate-ca.pem", "purchases.json",
        ]
        #expect(try runner.run(sign + ["--format", "jws", "-o", "signed.json"]).status == 0)
        #expect(try runner.run(sign + ["-o", "receipt.der"]).status == 0)
        guard case .array(let transactions)? = try JSONValue(parsing: runner.read("signed.json"))["signed_transactions"]
        else {
            Issue.record("no signed transactions")
            return
        }
        var files: [String] = []
        for (index, value) in transactions.enumerated() {
            guard case .string(let compact) = value else { continue }
            try runner.write("t\(index).jws", compact)
            files.append("t\(index).jws")
        }
        let common = [
            "--trust", "dev/root-ca.pem", "--catalog", "catalog.json", "--now", "2024-06-15T00:00:00Z", "--json",
        ]
        let fromJWS = try runner.run(["entitlements"] + files + common)
        #expect(fromJWS.status == 0, "\(fromJWS.standardError)")
        let fromReceipt = try runner.run(["entitlements", "receipt.der"] + common)
        let mixed = try runner.run(["entitlements", "receipt.der"] + files + common)
        let report = try JSONValue(parsing: fromJWS.standardOutput)
        #expect(report["entitlements"]?["pro"]?["state"] == .string("active"))
        #expect(report["balances"]?["coins"] == .integer(100))
        #expect(try JSONValue(parsing: fromReceipt.standardOutput) == report)
        #expect(try JSONValue(parsing: mixed.standardOutput) == report)
    }
}
